import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { ConfirmDelete, Empty, ErrorState, Loading } from '../components';
import { formatTime } from '../format';

interface PersonalKey {
  id: number;
  label: string;
  value?: string;
  mask_value: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
}

/** Scope sets a key is usually created with; the API takes any list of scopes. */
const PRESETS: { id: string; label: string; scopes: string[] }[] = [
  { id: 'all', label: 'Everything (all scopes)', scopes: ['*'] },
  {
    id: 'read',
    label: 'Read analytics (events, insights, persons, flags, definitions)',
    scopes: ['query:read', 'insight:read', 'person:read', 'feature_flag:read', 'event_definition:read', 'property_definition:read', 'project:read'],
  },
  { id: 'flags', label: 'Flag definitions for server SDKs (local evaluation)', scopes: ['feature_flag:read'] },
];

/** The signed-in user's personal API keys: issue (the value is shown once), list (masked) and revoke. */
export function ApiKeysSection({ timezone }: { timezone: string }) {
  const [keys, setKeys] = useState<PersonalKey[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [label, setLabel] = useState('');
  const [preset, setPreset] = useState('read');
  const [issued, setIssued] = useState<PersonalKey | null>(null);
  const load = () =>
    api<Page<PersonalKey>>('/api/personal_api_keys/')
      .then((page) => setKeys(page.results))
      .catch(setError);
  useEffect(() => {
    void load();
  }, []);

  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      const scopes = PRESETS.find((p) => p.id === preset)!.scopes;
      const key = await api<PersonalKey>('/api/personal_api_keys/', { method: 'POST', body: { label, scopes } });
      setIssued(key);
      setLabel('');
      await load();
    } catch (failure) {
      setError(failure);
    }
  };

  return (
    <section aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">Personal API keys</h2>
      <p class="hint">
        For scripts and server SDKs, sent as <code>Authorization: Bearer phx_…</code>. A key acts as you, within its scopes.
      </p>
      <form class="filters" onSubmit={create}>
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
        <button type="submit">Create key</button>
      </form>
      {issued?.value ? (
        <div class="card wide issued" role="status">
          <p>
            <strong>{issued.label}</strong>: copy this key now, it is not shown again.
          </p>
          <pre tabIndex={0}>
            <code data-testid="issued-key">{issued.value}</code>
          </pre>
        </div>
      ) : null}
      {error ? <ErrorState error={error} /> : null}
      {keys === null && !error ? <Loading what="API keys" /> : null}
      {keys !== null && keys.length === 0 ? <Empty>No personal API keys.</Empty> : null}
      {keys !== null && keys.length > 0 ? (
        <div class="table-scroll">
          <table class="list" data-testid="api-keys-table">
            <caption class="sr-only">Personal API keys</caption>
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Key</th>
                <th scope="col">Scopes</th>
                <th scope="col">Last used ({timezone})</th>
                <th scope="col">Revoke</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr key={key.id} data-key={key.label}>
                  <td>{key.label}</td>
                  <td>
                    <code>{key.mask_value}</code>
                  </td>
                  <td class="truncate">{key.scopes.join(', ')}</td>
                  <td>{key.last_used_at ? formatTime(key.last_used_at, timezone) : 'never'}</td>
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
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
