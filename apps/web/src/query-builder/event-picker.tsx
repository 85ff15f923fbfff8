import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { afterFirstResult } from '../first-result';
import { formatNumber } from '../format';

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

/** How many suggestions the list shows at once; typing narrows them. */
const SHOWN = 50;

function lastSeen(iso: string | null | undefined, now: number): string {
  if (!iso) return 'never seen';
  const minutes = Math.max(0, Math.round((now - Date.parse(iso)) / 60_000));
  if (minutes < 60) return `seen ${minutes} min ago`;
  if (minutes < 48 * 60) return `seen ${Math.round(minutes / 60)} h ago`;
  return `seen ${Math.round(minutes / 1440)} days ago`;
}

/**
 * A searchable event picker (the ARIA combobox pattern): typing narrows the project's events,
 * most recently seen first, each with its volume and when it was last seen; arrows move, Enter
 * takes the highlighted event or, with none, the text as typed; leaving the field keeps the text.
 */
export function EventPicker({
  name,
  label,
  value,
  onCommit,
  definitions,
}: {
  name: string;
  label: string;
  value: string;
  onCommit: (value: string) => void;
  definitions: EventDefinition[];
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const listId = `${name}-options`;
  const text = draft ?? value;
  const options = useMemo(() => {
    const typed = (draft ?? '').trim().toLowerCase();
    return definitions
      .filter((d) => d.name.toLowerCase().includes(typed))
      .sort((a, b) => Date.parse(b.last_seen_at ?? '0') - Date.parse(a.last_seen_at ?? '0') || a.name.localeCompare(b.name))
      .slice(0, SHOWN);
  }, [definitions, draft]);
  const expanded = open && options.length > 0;
  const commit = (next: string) => {
    setDraft(null);
    setOpen(false);
    setActive(-1);
    if (next.trim() !== value) onCommit(next.trim());
  };
  const now = Date.now();
  return (
    <span class="picker">
      <label>
        {label}
        <input
          name={name}
          role="combobox"
          autocomplete="off"
          aria-autocomplete="list"
          aria-expanded={expanded}
          aria-controls={listId}
          aria-activedescendant={expanded && active >= 0 ? `${listId}-${active}` : undefined}
          value={text}
          onFocus={() => setOpen(true)}
          onInput={(e) => {
            setDraft(e.currentTarget.value);
            setOpen(true);
            setActive(-1);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              setOpen(true);
              setActive(Math.min(active + 1, options.length - 1));
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              setActive(Math.max(active - 1, -1));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              commit(expanded && active >= 0 ? options[active]!.name : text);
            } else if (e.key === 'Escape') {
              setOpen(false);
              setActive(-1);
            }
          }}
          onBlur={() => (draft !== null ? commit(draft) : setOpen(false))}
        />
      </label>
      {expanded ? (
        <ul role="listbox" id={listId} class="picker-options" aria-label="Matching events">
          {options.map((d, i) => (
            <li
              key={d.name}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              data-event={d.name}
              onMouseDown={(e) => {
                // Before the input's blur: the click picks this event, not the text typed so far.
                e.preventDefault();
                commit(d.name);
              }}
            >
              <span class="picker-name">{d.name}</span>
              <span class="picker-meta">
                {formatNumber(d.volume ?? 0)} events · {lastSeen(d.last_seen_at, now)}
              </span>
            </li>
          ))}
        </ul>
      ) : null}
    </span>
  );
}
