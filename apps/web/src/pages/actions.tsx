import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmDelete, ListView, Loading, LoadFailure, useSaveStatus } from '../components';
import { formatTime } from '../format';
import { PropertyFiltersEditor } from '../property-filters-editor';
import type { PropertyFilter } from '../property-filter';
import { useEventDefinitions, EventPicker } from '../query-builder';
import { linkHandler, navigate } from '../router';
import { useGet } from '../use-get';

type Matching = 'exact' | 'contains' | 'regex';

/** One step as PostHog's ActionStepJSON: every condition set must hold; element ones apply to `$autocapture`. */
interface ActionStep {
  event?: string | null;
  url?: string | null;
  url_matching?: Matching | null;
  selector?: string | null;
  text?: string | null;
  text_matching?: Matching | null;
  href?: string | null;
  href_matching?: Matching | null;
  tag_name?: string | null;
  properties?: PropertyFilter[] | null;
}

interface Action {
  id: number;
  name: string;
  description: string;
  steps: ActionStep[];
  created_at: string;
}

const MATCHINGS: { value: Matching; label: string }[] = [
  { value: 'contains', label: 'contains' },
  { value: 'exact', label: 'equals' },
  { value: 'regex', label: 'matches regex' },
];

/** A step in words, for the list: "$pageview where URL contains /pricing". */
export function stepSummary(step: ActionStep): string {
  const parts: string[] = [];
  if (step.url) parts.push(`URL ${MATCHINGS.find((m) => m.value === (step.url_matching ?? 'contains'))?.label ?? 'contains'} ${step.url}`);
  if (step.selector) parts.push(`element matches ${step.selector}`);
  if (step.text) parts.push(`text ${MATCHINGS.find((m) => m.value === (step.text_matching ?? 'exact'))?.label ?? 'equals'} “${step.text}”`);
  if (step.properties?.length) parts.push(`${step.properties.length} property filter(s)`);
  return `${step.event || 'any event'}${parts.length ? ` where ${parts.join(', ')}` : ''}`;
}

/** Only what a step sets is sent (an empty field is no condition). */
function cleanStep(step: ActionStep): ActionStep {
  const out: ActionStep = {};
  for (const key of ['event', 'url', 'selector', 'text', 'href', 'tag_name'] as const) {
    const value = step[key]?.trim();
    if (value) out[key] = value;
  }
  if (out.url) out.url_matching = step.url_matching ?? 'contains';
  if (out.text) out.text_matching = step.text_matching ?? 'exact';
  if (out.href) out.href_matching = step.href_matching ?? 'exact';
  if (step.properties?.length) out.properties = step.properties;
  return out;
}

/** /actions: the project's actions, searchable, each with its steps in words. */
export function ActionsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const search = url.searchParams.get('search') ?? '';
  const [draft, setDraft] = useState(search);
  useEffect(() => setDraft(search), [search]);
  const listed = useGet<Page<Action>>(`/api/projects/${projectId}/actions/?limit=200${search ? `&search=${encodeURIComponent(search)}` : ''}`);
  return (
    <section aria-labelledby="actions-title">
      <h1 id="actions-title">Actions</h1>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(draft.trim() ? `/actions?search=${encodeURIComponent(draft.trim())}` : '/actions');
        }}
      >
        <label>
          Search actions
          <input type="search" name="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
        <a class="button secondary" href="/actions/new" onClick={linkHandler('/actions/new')}>
          New action
        </a>
      </form>
      <ListView
        items={listed.data?.results ?? (listed.error ? [] : null)}
        error={listed.error}
        retry={listed.reload}
        what="actions"
        empty={search ? `No action named like “${search}”.` : 'No actions yet: an action names the events that mean one thing (a sign-up, a click on "Buy").'}
        caption="Actions"
        testId="actions-table"
        head={['Name', 'Matches', `Created (${timezone})`]}
        row={(a) => (
          <tr key={a.id} data-action={a.name}>
            <td>
              <a href={`/actions/${a.id}`} onClick={linkHandler(`/actions/${a.id}`)}>
                {a.name}
              </a>
            </td>
            <td class="steps-summary">{a.steps.map(stepSummary).join(' or ') || '–'}</td>
            <td>{formatTime(a.created_at, timezone)}</td>
          </tr>
        )}
      />
    </section>
  );
}

/** /actions/new and /actions/:id: an action's name, description and steps (by event, URL, selector, text, properties). */
export function ActionPage({ projectId, id }: { projectId: number; id: string }) {
  const isNew = id === 'new';
  const base = `/api/projects/${projectId}/actions/`;
  const loaded = useGet<Action>(isNew ? null : `${base}${encodeURIComponent(id)}/`);
  const eventDefinitions = useEventDefinitions(projectId);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [steps, setSteps] = useState<ActionStep[]>([{ event: '$pageview', url_matching: 'contains' }]);
  const saving = useSaveStatus();
  const action = loaded.data;
  useEffect(() => {
    if (!action) return;
    setName(action.name);
    setDescription(action.description);
    setSteps(action.steps.length ? action.steps : [{}]);
  }, [action]);

  const back = { href: '/actions', label: 'Back to actions' };
  if (loaded.error) return <LoadFailure error={loaded.error} retry={loaded.reload} what="This action does not exist in this project." back={back} />;
  if (!isNew && !action) return <Loading what="the action" />;

  const save = (event: Event) => {
    event.preventDefault();
    void saving.run(async () => {
      const body = { name: name.trim(), description, steps: steps.map(cleanStep) };
      const saved = await api<Action>(isNew ? base : `${base}${action!.id}/`, { method: isNew ? 'POST' : 'PATCH', body });
      if (isNew) navigate(`/actions/${saved.id}`, true);
      else loaded.set(saved);
      return 'Saved.';
    });
  };
  const setStep = (index: number, patch: Partial<ActionStep>) => setSteps(steps.map((s, i) => (i === index ? { ...s, ...patch } : s)));

  return (
    <section aria-labelledby="action-title">
      <p>
        <a href={back.href} onClick={linkHandler(back.href)}>
          ← Actions
        </a>
      </p>
      <h1 id="action-title">{isNew ? 'New action' : action!.name}</h1>
      <form class="card wide editor" onSubmit={save}>
        <label>
          Name
          <input name="name" required maxLength={400} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <h2>Steps</h2>
        <p class="hint">
          An event is this action when it matches any step: every field filled in a step must hold. Selector and text apply to autocaptured clicks.
        </p>
        {steps.map((step, index) => {
          const label = `Step ${index + 1}`;
          return (
            <fieldset key={index} data-testid="action-step">
              <legend>
                {label}: {stepSummary(cleanStep(step))}
              </legend>
              <div class="filter-row">
                <EventPicker
                  label={`${label} event`}
                  name={`step-${index}-event`}
                  apply="as-typed"
                  value={step.event ?? ''}
                  placeholder="any event"
                  definitions={eventDefinitions}
                  onCommit={(event) => setStep(index, { event })}
                />
                <label>
                  {label} URL
                  <input value={step.url ?? ''} onInput={(e) => setStep(index, { url: e.currentTarget.value })} />
                </label>
                <label>
                  {label} URL matching
                  <select value={step.url_matching ?? 'contains'} onChange={(e) => setStep(index, { url_matching: e.currentTarget.value as Matching })}>
                    {MATCHINGS.map((m) => (
                      <option key={m.value} value={m.value}>
                        {m.label}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
              <div class="filter-row">
                <label>
                  {label} selector
                  <input value={step.selector ?? ''} onInput={(e) => setStep(index, { selector: e.currentTarget.value })} placeholder="button.buy" />
                </label>
                <label>
                  {label} text
                  <input value={step.text ?? ''} onInput={(e) => setStep(index, { text: e.currentTarget.value })} />
                </label>
                <label>
                  {label} text matching
                  <select value={step.text_matching ?? 'exact'} onChange={(e) => setStep(index, { text_matching: e.currentTarget.value as Matching })}>
                    {MATCHINGS.map((m) => (
                      <option key={m.value} value={m.value}>
                        {m.label}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
              <PropertyFiltersEditor
                filters={step.properties ?? []}
                onChange={(properties) => setStep(index, { properties })}
                label={`Property filters of ${label.toLowerCase()}`}
                rowLabel={(fi) => `${label} filter ${fi + 1}`}
                addLabel={`Add property filter to ${label.toLowerCase()}`}
                newFilter={{ key: '', type: 'event', operator: 'exact', value: [] }}
                apply="as-typed"
                types={['event']}
                projectId={projectId}
              />
              {steps.length > 1 ? (
                <button type="button" class="secondary" onClick={() => setSteps(steps.filter((_, i) => i !== index))}>
                  Remove {label.toLowerCase()}
                </button>
              ) : null}
            </fieldset>
          );
        })}
        <button type="button" class="secondary" onClick={() => setSteps([...steps, {}])}>
          Add step (OR)
        </button>
        <div class="row">
          <button type="submit">{isNew ? 'Create action' : 'Save'}</button>
          {saving.line}
        </div>
      </form>
      {action ? (
        <ConfirmDelete
          what="action"
          onConfirm={async () => {
            await api(`${base}${action.id}/`, { method: 'PATCH', body: { deleted: true } });
            navigate('/actions');
          }}
        />
      ) : null}
    </section>
  );
}
