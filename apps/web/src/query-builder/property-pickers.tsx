import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { afterFirstResult } from '../first-result';
import { countOf, definitionOptions, type EventDefinition } from './event-picker';
import { SearchPicker } from './search-picker';
import { UnknownName } from './unknown-name';

/** Kinds of property whose names and values the project records. */
export type PickedPropertyType = 'event' | 'person';

/** How long a loaded list of property definitions is reused by every picker on the page. */
const DEFINITIONS_FRESH_MS = 30_000;
const definitionsCache = new Map<string, { at: number; list: Promise<EventDefinition[]> }>();

function loadPropertyDefinitions(projectId: number, type: PickedPropertyType): Promise<EventDefinition[]> {
  const key = `${projectId}:${type}`;
  const cached = definitionsCache.get(key);
  if (cached && Date.now() - cached.at < DEFINITIONS_FRESH_MS) return cached.list;
  // On Trends, Funnels and dashboards, after the first result is drawn (first-result.ts).
  const list = afterFirstResult(() => api<Page<EventDefinition>>(`/api/projects/${projectId}/property_definitions/?type=${type}&limit=500`))
    .then((page) => page.results)
    .catch(() => {
      definitionsCache.delete(key);
      return [];
    });
  definitionsCache.set(key, { at: Date.now(), list });
  return list;
}

/**
 * The project's event or person property definitions (the 500 most seen, with volume and last
 * seen), loaded once for all the pickers of a page; empty while they load.
 */
export function usePropertyDefinitions(projectId: number, type: PickedPropertyType | null): EventDefinition[] {
  const [definitions, setDefinitions] = useState<EventDefinition[]>([]);
  useEffect(() => {
    if (type === null) return setDefinitions([]);
    let live = true;
    void loadPropertyDefinitions(projectId, type).then((list) => live && setDefinitions(list));
    return () => {
      live = false;
    };
  }, [projectId, type]);
  return definitions;
}

const isPicked = (type: string | undefined): type is PickedPropertyType => type === 'event' || type === 'person';

/**
 * A searchable picker of an event or person property name: the project's properties most recently
 * seen first, with volume and last seen; a name the project has never seen is flagged.
 */
export function PropertyPicker({
  projectId,
  type,
  ...field
}: {
  projectId: number;
  /** Another kind (a group's, a HogQL expression): a plain field, no suggestions. */
  type: string | undefined;
  name?: string;
  label: string;
  value: string;
  onCommit: (value: string) => void;
  apply?: 'on-leave' | 'as-typed';
  required?: boolean;
  disabled?: boolean;
  placeholder?: string;
  /** A comma-separated list of names (SearchPicker's `list`). */
  list?: boolean;
}) {
  const definitions = usePropertyDefinitions(projectId, isPicked(type) ? type : null);
  const options = useMemo(() => definitionOptions(definitions), [definitions]);
  const known = useMemo(() => definitions.map((d) => d.name), [definitions]);
  return (
    <SearchPicker
      {...field}
      options={options}
      what="properties"
      after={isPicked(type) && !field.disabled && !field.list ? <UnknownName name={field.value} known={known} what="Property" /> : null}
    />
  );
}

/** How long typing pauses before the values are searched again. */
const SEARCH_PAUSE_MS = 150;

/**
 * A searchable picker of a property's values, searched server-side as the user types (PostHog's
 * `events/values/` for event properties, `persons/values/` for person properties): each value with
 * how many events or persons hold it, most common first. Each answer is capped by the server.
 */
export function PropertyValuePicker({
  projectId,
  type,
  propertyKey,
  ...field
}: {
  projectId: number;
  type: string | undefined;
  /** The property whose values are offered; empty: none. */
  propertyKey: string;
  name?: string;
  label: string;
  hint?: string;
  value: string;
  onCommit: (value: string) => void;
  apply?: 'on-leave' | 'as-typed';
  list?: boolean;
  inputMode?: 'decimal';
  placeholder?: string;
}) {
  const [term, setTerm] = useState<string | null>(null);
  const [values, setValues] = useState<{ name: string; count: number }[]>([]);
  useEffect(() => {
    // Nothing is asked before the field is first focused, nor for a kind with no values endpoint.
    if (term === null || !propertyKey || !isPicked(type)) return setValues([]);
    let live = true;
    const path = type === 'person' ? 'persons/values' : 'events/values';
    const timer = setTimeout(() => {
      const search = new URLSearchParams({ key: propertyKey, ...(term ? { value: term } : {}) });
      api<{ name: unknown; count?: number }[]>(`/api/projects/${projectId}/${path}/?${search}`)
        .then((rows) => live && setValues(rows.map((r) => ({ name: String(r.name), count: Number(r.count ?? 0) }))))
        .catch(() => live && setValues([]));
    }, SEARCH_PAUSE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [projectId, type, propertyKey, term]);
  const unit = type === 'person' ? 'person' : 'event';
  const options = useMemo(() => values.map((v) => ({ name: v.name, meta: countOf(v.count, unit) })), [values, unit]);
  return <SearchPicker {...field} options={options} what="values" onSearch={setTerm} />;
}
