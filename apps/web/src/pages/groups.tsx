import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { Empty, ErrorState, ListView, LoadFailure, Loading, PropertiesTable, useSaveStatus } from '../components';
import { formatTime } from '../format';
import { linkHandler, navigate } from '../router';
import { EventsTable, type EventRow } from './events';

interface GroupType {
  group_type_index: number;
  group_type: string;
  name_singular: string | null;
  name_plural: string | null;
}

interface Group {
  group_type_index: number;
  group_key: string;
  group_properties: Record<string, unknown>;
  created_at: string;
}

interface GroupsPage {
  next: string | null;
  results: Group[];
}

type RelatedActor =
  | { type: 'person'; uuid: string; name: string; distinct_ids: string[] }
  | { type: 'group'; group_key: string; group_type_index: number; properties: Record<string, unknown> };

/** The latest events shown on a group's page. */
const GROUP_EVENTS = 50;

// PostHog's defaults when a type has no display names.
const pluralOf = (type: GroupType) => type.name_plural || `${type.group_type}(s)`;
const singularOf = (type: GroupType) => type.name_singular || type.group_type;
/** A group's name as PostHog shows it: its `name` property, else its key. */
const groupName = (key: string, properties: Record<string, unknown>) =>
  typeof properties['name'] === 'string' && properties['name'] ? properties['name'] : key;
const groupPath = (index: number, key: string) => `/groups/${index}/${encodeURIComponent(key)}`;

/** The key in a group page's address; a malformed escape is read as typed rather than failing the page. */
function decodedKey(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

function useGroupTypes(projectId: number) {
  const [types, setTypes] = useState<GroupType[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    setError(null);
    api<GroupType[]>(`/api/projects/${projectId}/groups_types/`).then(setTypes).catch(setError);
  }, [projectId, attempt]);
  return { types, setTypes, error, retry: () => setAttempt(attempt + 1) };
}

/** `/groups?type=N&search=…`: one group type's groups, searchable, with its display names. */
export function GroupsPage({ projectId, timezone, url }: { projectId: number; timezone: string; url: URL }) {
  const { types, setTypes, error: typesError, retry: retryTypes } = useGroupTypes(projectId);
  const search = url.searchParams.get('search') ?? '';
  const chosen = Number(url.searchParams.get('type') ?? types?.[0]?.group_type_index ?? 0);
  const type = types?.find((t) => t.group_type_index === chosen) ?? null;
  const [draft, setDraft] = useState(search);
  const [groups, setGroups] = useState<Group[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [moreError, setMoreError] = useState<unknown>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const address = (index: number, text: string) => `/groups?type=${index}${text ? `&search=${encodeURIComponent(text)}` : ''}`;

  useEffect(() => setDraft(search), [search]);
  useEffect(() => {
    if (!type) return;
    setGroups(null);
    setError(null);
    const query = new URLSearchParams({ group_type_index: String(type.group_type_index) });
    if (search) query.set('search', search);
    api<GroupsPage>(`/api/environments/${projectId}/groups/?${query}`)
      .then((page) => {
        setGroups(page.results);
        setNext(page.next);
      })
      .catch(setError);
  }, [projectId, type?.group_type_index, search, attempt]);

  const loadMore = async () => {
    if (!next) return;
    setLoadingMore(true);
    setMoreError(null);
    try {
      // `next` is an absolute address on this origin; its path and query are what the API reads.
      const address = new URL(next, location.origin);
      const more = await api<GroupsPage>(`${address.pathname}${address.search}`);
      setGroups((current) => [...(current ?? []), ...more.results]);
      setNext(more.next);
    } catch (failure) {
      setMoreError(failure);
    } finally {
      setLoadingMore(false);
    }
  };

  if (typesError) return <ErrorState error={typesError} retry={retryTypes} />;
  if (types === null) return <Loading what="group types" />;
  return (
    <section aria-labelledby="groups-title">
      <h1 id="groups-title">Groups</h1>
      {types.length === 0 ? (
        <Empty>
          No group types yet. Send <code>$groupidentify</code> events (posthog-js: <code>posthog.group('company', 'acme', {'{ name: "Acme" }'})</code>) to
          create groups.
        </Empty>
      ) : (
        <>
          <nav aria-label="Group types" class="tabs">
            {types.map((t) => (
              <a
                key={t.group_type_index}
                href={address(t.group_type_index, '')}
                onClick={linkHandler(address(t.group_type_index, ''))}
                aria-current={t.group_type_index === chosen ? 'page' : undefined}
              >
                {pluralOf(t)}
              </a>
            ))}
          </nav>
          {type === null ? (
            <Empty>This project has no group type {chosen}.</Empty>
          ) : (
            <>
              <form
                class="filters"
                role="search"
                onSubmit={(e) => {
                  e.preventDefault();
                  navigate(address(type.group_type_index, draft.trim()));
                }}
              >
                <label>
                  Search {pluralOf(type)} by property or exact key
                  <input type="search" name="search" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
                </label>
                <button type="submit">Search</button>
              </form>
              <ListView
                items={groups}
                error={error}
                retry={() => setAttempt(attempt + 1)}
                what={pluralOf(type)}
                empty={search ? `No ${singularOf(type)} matches “${search}”.` : `No ${pluralOf(type)} yet.`}
                caption={pluralOf(type)}
                testId="groups-table"
                head={[singularOf(type), 'Key', `First seen (${timezone})`]}
                row={(group) => (
                  <tr key={group.group_key} data-group-key={group.group_key}>
                    <td>
                      <a href={groupPath(group.group_type_index, group.group_key)} onClick={linkHandler(groupPath(group.group_type_index, group.group_key))}>
                        {groupName(group.group_key, group.group_properties)}
                      </a>
                    </td>
                    <td class="truncate">
                      <code>{group.group_key}</code>
                    </td>
                    <td>{formatTime(group.created_at, timezone)}</td>
                  </tr>
                )}
              />
              {moreError ? <ErrorState error={moreError} retry={loadMore} /> : null}
              {next && groups?.length ? (
                <button type="button" class="secondary" disabled={loadingMore} onClick={loadMore}>
                  {loadingMore ? 'Loading…' : `Load more ${pluralOf(type)}`}
                </button>
              ) : null}
              <TypeNamesForm
                projectId={projectId}
                type={type}
                onSaved={(updated) => setTypes(updated)}
                key={`${type.group_type_index}:${type.name_singular ?? ''}:${type.name_plural ?? ''}`}
              />
            </>
          )}
        </>
      )}
    </section>
  );
}

/** The type's singular and plural display names (`groups_types/update_metadata`). */
function TypeNamesForm({ projectId, type, onSaved }: { projectId: number; type: GroupType; onSaved: (types: GroupType[]) => void }) {
  const [singular, setSingular] = useState(type.name_singular ?? '');
  const [plural, setPlural] = useState(type.name_plural ?? '');
  const { run, line } = useSaveStatus();
  return (
    <details class="columns">
      <summary>Display names of “{type.group_type}”</summary>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const updated = await api<GroupType[]>(`/api/projects/${projectId}/groups_types/update_metadata/`, {
              method: 'PATCH',
              body: [{ group_type_index: type.group_type_index, name_singular: singular.trim() || null, name_plural: plural.trim() || null }],
            });
            onSaved(updated);
            return 'Saved.';
          });
        }}
      >
        <label>
          Singular
          <input name="name_singular" value={singular} maxLength={400} placeholder={type.group_type} onInput={(e) => setSingular(e.currentTarget.value)} />
        </label>
        <label>
          Plural
          <input name="name_plural" value={plural} maxLength={400} placeholder={`${type.group_type}(s)`} onInput={(e) => setPlural(e.currentTarget.value)} />
        </label>
        <button type="submit" class="secondary">
          Save names
        </button>
        {line}
      </form>
    </details>
  );
}

/** `/groups/<index>/<key>`: a group's properties, its related persons and groups, and its latest events. */
export function GroupDetailPage({ projectId, timezone, index, encodedKey }: { projectId: number; timezone: string; index: number; encodedKey: string }) {
  const groupKey = decodedKey(encodedKey);
  const { types } = useGroupTypes(projectId);
  const [group, setGroup] = useState<Group | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [related, setRelated] = useState<RelatedActor[] | null>(null);
  const [relatedError, setRelatedError] = useState<unknown>(null);
  const [events, setEvents] = useState<EventRow[] | null>(null);
  const [eventsError, setEventsError] = useState<unknown>(null);
  useEffect(() => {
    // Another group's page reuses this one: nothing of the previous group may show, even if its answers arrive late.
    let current = true;
    const keep =
      <T,>(set: (value: T) => void) =>
      (value: T) => {
        if (current) set(value);
      };
    setGroup(null);
    setError(null);
    setRelated(null);
    setRelatedError(null);
    setEvents(null);
    setEventsError(null);
    const key = encodeURIComponent(groupKey);
    api<Group>(`/api/environments/${projectId}/groups/find/?group_type_index=${index}&group_key=${key}`).then(keep(setGroup)).catch(keep(setError));
    api<RelatedActor[]>(`/api/environments/${projectId}/groups/related/?group_type_index=${index}&id=${key}`)
      .then(keep(setRelated))
      .catch(keep(setRelatedError));
    // The group's events carry its key in `$group_<index>`.
    const properties = encodeURIComponent(JSON.stringify([{ key: `$group_${index}`, value: groupKey, operator: 'exact', type: 'event' }]));
    api<Page<EventRow>>(`/api/environments/${projectId}/events/?properties=${properties}&limit=${GROUP_EVENTS}`)
      .then((page) => keep(setEvents)(page.results))
      .catch(keep(setEventsError));
    return () => {
      current = false;
    };
  }, [projectId, index, groupKey]);

  const type = types?.find((t) => t.group_type_index === index) ?? null;
  const listPath = `/groups?type=${index}`;
  if (error)
    return (
      <LoadFailure
        error={error}
        retry={() => location.reload()}
        what="No group with this key exists in this project."
        back={{ href: '/groups', label: 'Back to groups' }}
      />
    );
  if (!group) return <Loading what="the group" />;
  const persons = (related ?? []).filter((a): a is Extract<RelatedActor, { type: 'person' }> => a.type === 'person');
  const groups = (related ?? []).filter((a): a is Extract<RelatedActor, { type: 'group' }> => a.type === 'group');
  const typeName = (i: number) => {
    const t = types?.find((candidate) => candidate.group_type_index === i);
    return t ? singularOf(t) : `group type ${i}`;
  };
  return (
    <section aria-labelledby="group-title">
      <p>
        <a href={listPath} onClick={linkHandler(listPath)}>
          ← {type ? pluralOf(type) : 'Groups'}
        </a>
      </p>
      <h1 id="group-title">{groupName(group.group_key, group.group_properties)}</h1>
      <p class="hint">
        {type ? singularOf(type) : `Group type ${index}`} <code>{group.group_key}</code>, first seen {formatTime(group.created_at, timezone)} ({timezone})
      </p>
      <h2>Properties</h2>
      <PropertiesTable properties={group.group_properties} caption={`Properties of ${group.group_key}`} />
      <h2>Related persons</h2>
      <p class="hint">Persons and groups that shared events with this group in the last 90 days.</p>
      {relatedError ? <ErrorState error={relatedError} /> : null}
      {related === null && !relatedError ? <Loading what="related persons" /> : null}
      {related !== null && persons.length === 0 ? <Empty>No person sent events of this group in the last 90 days.</Empty> : null}
      {persons.length > 0 ? (
        <ul data-testid="related-persons">
          {persons.map((person) => (
            <li key={person.uuid}>
              <a href={`/persons/${person.uuid}`} onClick={linkHandler(`/persons/${person.uuid}`)}>
                {person.name}
              </a>
            </li>
          ))}
        </ul>
      ) : null}
      {groups.length > 0 ? (
        <>
          <h2>Related groups</h2>
          <ul data-testid="related-groups">
            {groups.map((other) => (
              <li key={`${other.group_type_index}:${other.group_key}`}>
                {typeName(other.group_type_index)}{' '}
                <a href={groupPath(other.group_type_index, other.group_key)} onClick={linkHandler(groupPath(other.group_type_index, other.group_key))}>
                  {groupName(other.group_key, other.properties)}
                </a>
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <h2>Latest events</h2>
      {eventsError ? <ErrorState error={eventsError} /> : null}
      {events === null && !eventsError ? <Loading what="events" /> : null}
      {events !== null && events.length === 0 ? <Empty>No events of this group.</Empty> : null}
      {events !== null && events.length > 0 ? <EventsTable events={events} timezone={timezone} testId="group-events" /> : null}
    </section>
  );
}
