import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { afterFirstResult } from '../first-result';
import { formatNumber } from '../format';
import { SearchPicker, type PickerOption } from './search-picker';

/** An event as the project's definitions know it: how often and how lately it was seen. */
export interface EventDefinition {
  name: string;
  volume?: number | null;
  last_seen_at?: string | null;
}

/** The project's event definitions (the 500 most seen), for the event pickers. */
export function useEventDefinitions(projectId: number): EventDefinition[] {
  const [definitions, setDefinitions] = useState<EventDefinition[]>([]);
  useEffect(() => {
    afterFirstResult(() => api<Page<EventDefinition>>(`/api/projects/${projectId}/event_definitions/?limit=500`))
      .then((page) => setDefinitions(page.results))
      .catch(() => setDefinitions([]));
  }, [projectId]);
  return definitions;
}

/** When a definition was last seen, in words ("seen 5 min ago"). */
export function lastSeen(iso: string | null | undefined, now: number): string {
  if (!iso) return 'never seen';
  const minutes = Math.max(0, Math.round((now - Date.parse(iso)) / 60_000));
  if (minutes < 60) return `seen ${minutes} min ago`;
  if (minutes < 48 * 60) return `seen ${Math.round(minutes / 60)} h ago`;
  return `seen ${Math.round(minutes / 1440)} days ago`;
}

/** A count and its unit, singular for one ("1 event", "3 persons"). */
export const countOf = (n: number, unit: 'event' | 'person') => `${formatNumber(n)} ${n === 1 ? unit : `${unit}s`}`;

/** Definitions as picker suggestions: most recently seen first, each with its volume and when it was last seen. */
export function definitionOptions(definitions: EventDefinition[], now = Date.now()): PickerOption[] {
  return [...definitions]
    .sort((a, b) => Date.parse(b.last_seen_at ?? '0') - Date.parse(a.last_seen_at ?? '0') || a.name.localeCompare(b.name))
    .map((d) => ({ name: d.name, meta: `${countOf(d.volume ?? 0, 'event')} · ${lastSeen(d.last_seen_at, now)}` }));
}

/** A searchable event picker over the project's event definitions (SearchPicker). */
export function EventPicker({
  name,
  label,
  value,
  onCommit,
  definitions,
  ...field
}: {
  name: string;
  label: string;
  value: string;
  onCommit: (value: string) => void;
  definitions: EventDefinition[];
  placeholder?: string;
  apply?: 'on-leave' | 'as-typed';
}) {
  const options = useMemo(() => definitionOptions(definitions), [definitions]);
  return <SearchPicker {...field} name={name} label={label} value={value} onCommit={onCommit} options={options} what="events" />;
}
