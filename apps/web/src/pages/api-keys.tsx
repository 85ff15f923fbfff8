import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmAction, ConfirmDelete, CopyButton, ErrorState, ListView } from '../components';
import { formatTime } from '../format';

interface PersonalKey {
  id: number;
  label: string;
  value?: string;
  mask_value: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  last_rolled_at: string | null;
}

/** Scope sets a key is usually created with; "custom" lets the user choose per resource. */
const PRESETS: { id: string; label: string; scopes: string[] }[] = [
  { id: 'all', label: 'Everything (all scopes)', scopes: ['*'] },
  {
    id: 'read',
    label: 'Read analytics (events, insights, persons, flags, definitions)',
    scopes: ['query:read', 'insight:read', 'person:read', 'feature_flag:read', 'event_definition:read', 'property_definition:read', 'project:read'],
  },
  { id: 'flags', label: 'Flag definitions for server SDKs (local evaluation)', scopes: ['feature_flag:read'] },
  { id: 'custom', label: 'Custom: choose per resource', scopes: [] },
];

/** The resources Sightline's API serves, each given no access, read, or write (write includes read), as PostHog's key form does. */
const RESOURCES: { object: string; label: string }[] = [
  { object: 'query', label: 'Query (events list, HogQL)' },
  { object: 'insight', label: 'Insights (trends, funnels)' },
  { object: 'dashboard', label: 'Dashboards' },
  { object: 'person', label: 'Persons' },
  { object: 'cohort', label: 'Cohorts' },
  { object: 'feature_flag', label: 'Feature flags' },
  { object: 'action', label: 'Actions' },
  { object: 'event_definition', label: 'Event definitions' },
  { object: 'property_definition', label: 'Property definitions' },
  { object: 'activity_log', label: 'Activity log' },
  { object: 'project', label: 'Projects' },
  { object: 'organization', label: 'Organization' },
  { object: 'personal_api_key', label: 'Personal API keys' },
  { object: 'user', label: 'User' },
];

type Level = '' | 'read' | 'write';

/** The signed-in user's personal API keys: issue (preset or custom scopes; the value is shown once), list (masked), roll and revoke. */
export function ApiKeysSection({ timezone }: { timezone: string }) {
  const [keys, setKeys] = useState<PersonalKey[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [formError, setFormError] = useState<unknown>(null);
  const [label, setLabel] = useState('');
  const [preset, setPreset] = useState('read');
  const [levels, setLevels] = useState<Record<string, Level>>({});
  const [issued, setIssued] = useState<PersonalKey | null>(null);
  const load = () => {
    setError(null);
    return api<Page<PersonalKey>>('/api/personal_api_keys/')
      .then((page) => setKeys(page.results))
      .catch(setError);
  };
  useEffect(() => {
    void load();
  }, []);

  const chosenScopes = (): string[] =>
    preset === 'custom'
      ? Object.entries(levels)
          .filter(([, level]) => level !== '')
          .map(([object, level]) => `${object}:${level}`)
      : PRESETS.find((p) => p.id === preset)!.scopes;

  const create = async (event: Event) => {
    event.preventDefault();
    setFormError(null);
    const scopes = chosenScopes();
    if (scopes.length === 0) {
      setFormError(new Error('Choose read or write access to at least one resource.'));
      return;
    }
    try {
      const key = await api<PersonalKey>('/api/personal_api_keys/', { method: 'POST', body: { label, scopes } });
      setIssued(key);
      setLabel('');
      await load();
    } catch (failure) {
      setFormError(failure);
    }
  };

  const roll = async (key: PersonalKey) => {
    setIssued(await api<PersonalKey>(`/api/personal_api_keys/${key.id}/roll/`, { method: 'POST' }));
    await load();
  };

  return (
    <section aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">Personal API keys</h2>
      <p class="hint">
        For scripts and server SDKs, sent as <code>Authorization: Bearer phx_…</code>. A key acts as you, within its scopes.
      </p>
      <form class="card wide editor" onSubmit={create} aria-label="New personal API key">
        <label>
          Label
          <input name="key_label" required maxLength={40} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
        </label>
        <label>
          Scopes
          <select name="key_scopes" value={preset} onChange={(e) => setPreset(e.currentTarget.value)}>
            {PRESETS.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        {preset === 'custom' ? (
          <div class="table-scroll">
            <table class="list" data-testid="scope-picker">
              <caption>Access per resource (write includes read)</caption>
              <thead>
                <tr>
                  <th scope="col">Resource</th>
                  <th scope="col">Access</th>
                </tr>
              </thead>
              <tbody>
                {RESOURCES.map((resource) => (
                  <tr key={resource.object}>
                    <th scope="row">{resource.label}</th>
                    <td>
                      <select
                        aria-label={`${resource.label} access`}
                        value={levels[resource.object] ?? ''}
                        onChange={(e) => setLevels({ ...levels, [resource.object]: e.currentTarget.value as Level })}
                      >
                        <option value="">No access</option>
                        <option value="read">Read</option>
                        <option value="write">Write</option>
                      </select>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {formError ? <ErrorState error={formError} /> : null}
        <div>
          <button type="submit">Create key</button>
        </div>
      </form>
      {issued?.value ? (
        <div class="card wide issued" role="status">
          <p>
            <strong>{issued.label}</strong>: copy this key now, it is not shown again.{' '}
            <CopyButton text={issued.value} label={`Copy the new key ${issued.label}`} />
          </p>
          <pre tabIndex={0}>
            <code data-testid="issued-key">{issued.value}</code>
          </pre>
        </div>
      ) : null}
      <ListView
        items={keys}
        error={error}
        retry={load}
        what="API keys"
        empty="No personal API keys."
        caption="Personal API keys"
        testId="api-keys-table"
        head={['Label', 'Key', 'Scopes', `Last used (${timezone})`, 'Roll', 'Revoke']}
        row={(key) => (
          <tr key={key.id} data-key={key.label}>
            <td>{key.label}</td>
            <td>
              <code>{key.mask_value}</code>
            </td>
            <td class="truncate" title={key.scopes.join(', ')}>
              {key.scopes.join(', ')}
            </td>
            <td>{key.last_used_at ? formatTime(key.last_used_at, timezone) : 'never'}</td>
            <td>
              <ConfirmAction
                start="Roll…"
                startLabel={`Roll key ${key.label}`}
                question={`Give ${key.label} a new value? The current one stops working at once.`}
                confirm={`Yes, roll key ${key.label}`}
                busy="Rolling…"
                groupLabel={`Roll key ${key.label}`}
                onConfirm={() => roll(key)}
              />
              {key.last_rolled_at ? <span class="hint"> rolled {formatTime(key.last_rolled_at, timezone)}</span> : null}
            </td>
            <td>
              <ConfirmDelete
                what={`key ${key.label}`}
                onConfirm={async () => {
                  await api(`/api/personal_api_keys/${key.id}/`, { method: 'DELETE' });
                  if (issued?.id === key.id) setIssued(null);
                  await load();
                }}
              />
            </td>
          </tr>
        )}
      />
    </section>
  );
}
