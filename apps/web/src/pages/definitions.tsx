import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ErrorState, ListView, Loading, LoadFailure, useSaveStatus } from '../components';
import { formatNumber, formatTime } from '../format';
import { linkHandler, navigate } from '../router';
import { useGet } from '../use-get';

interface Definition {
  id: number;
  name: string;
  description: string;
  volume: number;
  created_at: string;
  last_seen_at: string;
  property_type?: string | null;
}

/** The three lists, each an API list: event names, event property keys, person property keys. */
const KINDS = [
  { tab: 'events', label: 'Events', list: 'event_definitions/?', detail: 'events' },
  { tab: 'event-properties', label: 'Event properties', list: 'property_definitions/?type=event&', detail: 'properties' },
  { tab: 'person-properties', label: 'Person properties', list: 'property_definitions/?type=person&', detail: 'properties' },
] as const;
const PROPERTY_TYPES = ['String', 'Numeric', 'Boolean', 'DateTime'];

const listPath = (tab: string, search: string) => `/definitions?tab=${tab}${search ? `&search=${encodeURIComponent(search)}` : ''}`;

/** /definitions: what the project has seen (names, volume, last seen), searchable, and an event defined before it arrives. */
export function DefinitionsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const kind = KINDS.find((k) => k.tab === url.searchParams.get('tab')) ?? KINDS[0];
  const search = url.searchParams.get('search') ?? '';
  const [draft, setDraft] = useState(search);
  useEffect(() => setDraft(search), [search]);
  const listed = useGet<Page<Definition>>(`/api/projects/${projectId}/${kind.list}limit=200${search ? `&search=${encodeURIComponent(search)}` : ''}`);
  const isProperty = kind.detail === 'properties';
  return (
    <section aria-labelledby="definitions-title">
      <h1 id="definitions-title">Data definitions</h1>
      <nav class="tabs" aria-label="Definition kinds">
        {KINDS.map((k) => (
          <a key={k.tab} href={listPath(k.tab, '')} onClick={linkHandler(listPath(k.tab, ''))} aria-current={k.tab === kind.tab ? 'page' : undefined}>
            {k.label}
          </a>
        ))}
      </nav>
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          navigate(listPath(kind.tab, draft.trim()));
        }}
      >
        <label>
          Search {kind.label.toLowerCase()}
          <input type="search" name="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      {kind.tab === 'events' ? <NewEventDefinition projectId={projectId} /> : null}
      <ListView
        items={listed.data?.results ?? (listed.error ? [] : null)}
        error={listed.error}
        retry={listed.reload}
        what={kind.label.toLowerCase()}
        empty={search ? `Nothing named like “${search}”.` : 'Nothing seen yet: names appear here once events arrive.'}
        caption={`${kind.label}, most seen first`}
        testId="definitions-table"
        head={['Name', 'Description', ...(isProperty ? ['Type'] : []), 'Volume', `Last seen (${timezone})`]}
        row={(d) => {
          const href = `/definitions/${kind.detail}/${d.id}`;
          return (
            <tr key={d.id} data-definition={d.name}>
              <td>
                <a href={href} onClick={linkHandler(href)}>
                  <code>{d.name}</code>
                </a>
              </td>
              <td class="truncate">{d.description || <span class="hint">–</span>}</td>
              {isProperty ? <td>{d.property_type ?? '–'}</td> : null}
              <td>{formatNumber(d.volume)}</td>
              <td>{d.volume > 0 ? formatTime(d.last_seen_at, timezone) : 'not yet'}</td>
            </tr>
          );
        }}
      />
      {listed.data && listed.data.count !== undefined && listed.data.count > listed.data.results.length ? (
        <p class="hint">
          Showing the {listed.data.results.length} most seen of {formatNumber(listed.data.count)}; search to find the others.
        </p>
      ) : null}
    </section>
  );
}

function NewEventDefinition({ projectId }: { projectId: number }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<unknown>(null);
  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const made = await api<Definition>(`/api/projects/${projectId}/event_definitions/`, { method: 'POST', body: { name: name.trim(), description } });
      navigate(`/definitions/events/${made.id}`);
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <details class="columns new-item">
      <summary>Define an event before it arrives</summary>
      <form class="filters" onSubmit={create}>
        <label>
          Event name
          <input name="name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <button type="submit">Create definition</button>
      </form>
      {error ? <ErrorState error={error} /> : null}
    </details>
  );
}

/** /definitions/events/:id and /definitions/properties/:id: one definition, its numbers, and its description (and a property's type) edited. */
export function DefinitionPage({ projectId, timezone, kind, id }: { projectId: number; timezone: string; kind: 'events' | 'properties'; id: string }) {
  const path = `/api/projects/${projectId}/${kind === 'events' ? 'event_definitions' : 'property_definitions'}/${encodeURIComponent(id)}/`;
  const loaded = useGet<Definition>(path);
  const [description, setDescription] = useState('');
  const [propertyType, setPropertyType] = useState('');
  const saving = useSaveStatus();
  const definition = loaded.data;
  useEffect(() => {
    setDescription(definition?.description ?? '');
    setPropertyType(definition?.property_type ?? '');
  }, [definition]);
  const back = { href: '/definitions', label: 'Back to data definitions' };
  if (loaded.error) return <LoadFailure error={loaded.error} retry={loaded.reload} what="This definition does not exist in this project." back={back} />;
  if (!definition) return <Loading what="the definition" />;
  const isProperty = kind === 'properties';
  const save = (event: Event) => {
    event.preventDefault();
    void saving.run(async () => {
      const body: Record<string, unknown> = { description };
      if (isProperty) body['property_type'] = propertyType || null;
      loaded.set(await api<Definition>(path, { method: 'PATCH', body }));
      return 'Saved.';
    });
  };
  return (
    <section aria-labelledby="definition-title">
      <p>
        <a href={back.href} onClick={linkHandler(back.href)}>
          ← Data definitions
        </a>
      </p>
      <h1 id="definition-title">
        <code>{definition.name}</code>
      </h1>
      <dl class="facts" data-testid="definition-facts">
        <div>
          <dt>Kind</dt>
          <dd>{isProperty ? 'Property' : 'Event'}</dd>
        </div>
        <div>
          <dt>Volume</dt>
          <dd>{formatNumber(definition.volume)}</dd>
        </div>
        <div>
          <dt>First seen</dt>
          <dd>{formatTime(definition.created_at, timezone)}</dd>
        </div>
        <div>
          <dt>Last seen</dt>
          <dd>{definition.volume > 0 ? formatTime(definition.last_seen_at, timezone) : 'not yet'}</dd>
        </div>
        {isProperty ? (
          <div>
            <dt>Type</dt>
            <dd>{definition.property_type ?? 'unknown'}</dd>
          </div>
        ) : null}
      </dl>
      <form class="card editor" onSubmit={save}>
        <h2>Edit</h2>
        <label>
          Description
          <textarea name="description" rows={3} maxLength={4000} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        {isProperty ? (
          <label>
            Property type
            <select name="property_type" value={propertyType} onChange={(e) => setPropertyType(e.currentTarget.value)}>
              <option value="">Unknown</option>
              {PROPERTY_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <div class="row">
          <button type="submit">Save</button>
          {saving.line}
        </div>
      </form>
    </section>
  );
}
