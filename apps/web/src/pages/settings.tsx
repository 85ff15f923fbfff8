import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton, ErrorState, Loading } from '../components';
import type { PropertyFilter } from '../property-filter';
import { PropertyFiltersEditor } from '../property-filters-editor';
import { ApiKeysSection } from './api-keys';

interface ProjectSettings {
  id: number;
  name: string;
  api_token: string;
  timezone: string;
  week_start_day: 0 | 1 | null;
  autocapture_opt_out: boolean;
  test_account_filters: PropertyFilter[];
}

function timezones(current: string): string[] {
  const supported = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  return [...new Set(['UTC', current, ...supported])].sort((a, b) => (a === 'UTC' ? -1 : b === 'UTC' ? 1 : a.localeCompare(b)));
}

/** The project's settings, and the SDK set-up for this instance, ready to paste. */
export function SettingsPage({ projectId, timezone, onProjectChanged }: { projectId: number; timezone: string; onProjectChanged: () => void }) {
  const [project, setProject] = useState<ProjectSettings | null>(null);
  const [draft, setDraft] = useState<ProjectSettings | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState('');
  useEffect(() => {
    api<ProjectSettings>(`/api/projects/${projectId}/`)
      .then((loaded) => {
        setProject(loaded);
        setDraft(loaded);
      })
      .catch(setError);
  }, [projectId]);
  if (error && !project) return <ErrorState error={error} />;
  if (!project || !draft) return <Loading what="settings" />;
  const filters = draft.test_account_filters ?? [];
  const setFilters = (next: PropertyFilter[]) => setDraft({ ...draft, test_account_filters: next });

  const save = async (event: Event) => {
    event.preventDefault();
    setStatus('Saving…');
    setError(null);
    try {
      const saved = await api<ProjectSettings>(`/api/projects/${projectId}/`, {
        method: 'PATCH',
        body: {
          name: draft.name,
          timezone: draft.timezone,
          week_start_day: draft.week_start_day,
          autocapture_opt_out: draft.autocapture_opt_out,
          test_account_filters: draft.test_account_filters,
        },
      });
      setProject(saved);
      setDraft(saved);
      setStatus('Saved.');
      onProjectChanged();
    } catch (failure) {
      setStatus('');
      setError(failure);
    }
  };

  const origin = location.origin;
  const browserSnippet = `npm install posthog-js

import posthog from 'posthog-js';
posthog.init('${project.api_token}', { api_host: '${origin}' });`;
  const serverSnippet = `npm install posthog-node

import { PostHog } from 'posthog-node';
const posthog = new PostHog('${project.api_token}', { host: '${origin}' });
posthog.capture({ distinctId: 'user-1', event: 'signed_up' });
await posthog.shutdown();`;
  const curlSnippet = `curl ${origin}/capture/ -H 'Content-Type: application/json' \\
  -d '{"api_key":"${project.api_token}","event":"signed_up","distinct_id":"user-1"}'`;

  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">Settings</h1>
      <form class="card wide editor" onSubmit={save} aria-labelledby="project-settings-title">
        <h2 id="project-settings-title">Project</h2>
        <label>
          Project name
          <input name="name" required value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} />
        </label>
        <label>
          Timezone (days in trends and funnels start at midnight here)
          <select name="timezone" value={draft.timezone} onChange={(e) => setDraft({ ...draft, timezone: e.currentTarget.value })}>
            {timezones(project.timezone).map((zone) => (
              <option key={zone} value={zone}>
                {zone}
              </option>
            ))}
          </select>
        </label>
        <label>
          Weeks start on
          <select
            name="week_start_day"
            value={String(draft.week_start_day ?? 0)}
            onChange={(e) => setDraft({ ...draft, week_start_day: Number(e.currentTarget.value) as 0 | 1 })}
          >
            <option value="0">Sunday</option>
            <option value="1">Monday</option>
          </select>
        </label>
        <label class="inline">
          <input
            type="checkbox"
            name="autocapture"
            checked={!draft.autocapture_opt_out}
            onChange={(e) => setDraft({ ...draft, autocapture_opt_out: !e.currentTarget.checked })}
          />{' '}
          Autocapture clicks and form changes in posthog-js
        </label>
        <fieldset data-testid="test-account-filters">
          <legend>Test-account filters</legend>
          <p class="hint">
            Events matching all of these are internal or test traffic; insights leave them out when “Filter out internal and test users” is on.
          </p>
          {filters.length === 0 ? <p class="hint">No test-account filters.</p> : null}
          <PropertyFiltersEditor
            filters={filters}
            onChange={setFilters}
            label="Test-account filters"
            rowLabel={(i) => `Test filter ${i + 1}`}
            addLabel="Add test-account filter"
            newFilter={{ key: '', type: 'person', operator: 'not_icontains', value: '' }}
            apply="as-typed"
            types={['event', 'person']}
            projectId={projectId}
          />
        </fieldset>
        {error ? <ErrorState error={error} /> : null}
        <div>
          <button type="submit">Save</button>{' '}
          <span role="status" aria-live="polite">
            {status}
          </span>
        </div>
      </form>
      <h2>Send events</h2>
      <p>
        Project API key: <code data-testid="project-api-key">{project.api_token}</code> (public: it can only send events and read flags).
      </p>
      <Snippet title="In the browser (posthog-js)" text={browserSnippet} />
      <Snippet title="On a server (posthog-node)" text={serverSnippet} />
      <Snippet title="From the shell" text={curlSnippet} />
      <ApiKeysSection timezone={timezone} />
    </section>
  );
}

function Snippet({ title, text }: { title: string; text: string }) {
  return (
    <figure class="snippet">
      <figcaption>
        {title} <CopyButton text={text} label={`Copy: ${title}`} />
      </figcaption>
      <pre tabIndex={0} data-testid="snippet">
        <code>{text}</code>
      </pre>
    </figure>
  );
}
