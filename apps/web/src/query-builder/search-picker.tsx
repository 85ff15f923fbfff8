import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

/** One suggestion: the text it puts in the field, and what is known of it (volume, last seen, count). */
export interface PickerOption {
  name: string;
  meta?: string;
}

/** How many suggestions the list shows at once; typing narrows them. */
const SHOWN = 50;

/** The part of the text a pick replaces and the search reads: all of it, or after the last comma in a list. */
function lastTerm(text: string, list: boolean): { head: string; term: string } {
  if (!list) return { head: '', term: text };
  const cut = text.lastIndexOf(',');
  return cut < 0 ? { head: '', term: text } : { head: `${text.slice(0, cut + 1)} `, term: text.slice(cut + 1) };
}

/**
 * A searchable text field (the ARIA combobox pattern) with suggestions in the order given: typing
 * narrows them, arrows move, Enter takes the highlighted one or, with none, the text as typed,
 * Escape closes the list; leaving the field keeps the text.
 *
 * `apply`: `on-leave` commits when Enter is pressed or the field is left (the builders, whose
 * query then runs once); `as-typed` commits every key and keeps the text as typed (forms saved
 * later). `list`: the text is a comma-separated list; a pick replaces its last item and typing
 * searches that item. `onSearch` hears the text searched, for suggestions searched server-side.
 */
export function SearchPicker({
  name,
  label,
  hint,
  value,
  onCommit,
  options,
  what,
  apply = 'on-leave',
  list = false,
  onSearch,
  after,
  ...input
}: {
  name?: string;
  label: string;
  /** Words after the label, e.g. " (comma-separated)". */
  hint?: string;
  value: string;
  onCommit: (value: string) => void;
  options: PickerOption[];
  /** Names the suggestion list: "Matching <what>". */
  what: string;
  apply?: 'on-leave' | 'as-typed';
  list?: boolean;
  onSearch?: (term: string) => void;
  /** Shown after the field, outside its label (the field's name stays its label), e.g. "never seen in this project". */
  after?: ComponentChildren;
  required?: boolean;
  disabled?: boolean;
  placeholder?: string;
  inputMode?: 'decimal';
}) {
  const live = apply === 'as-typed';
  const [draft, setDraft] = useState<string | null>(live ? value : null);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [listId] = useState(() => `picker-${Math.random().toString(36).slice(2, 10)}`);
  const field = useRef<HTMLInputElement>(null);
  // As typed, the text is the field's own; a value changed from outside (a form loaded or reset)
  // replaces it unless the field is being typed in, where a change is the echo of the typing.
  useEffect(() => {
    if (live && document.activeElement !== field.current) setDraft(value);
  }, [value]);
  const text = draft ?? value;
  const { head, term } = lastTerm(text, list);
  const searched = draft === null && !live ? '' : term.trim().toLowerCase();
  const shown = useMemo(() => options.filter((o) => o.name.toLowerCase().includes(searched)).slice(0, SHOWN), [options, searched]);
  // Nothing to choose when the one suggestion left is the text just typed: the list stays closed.
  const onlyTyped = (draft !== null || live) && shown.length === 1 && shown[0]!.name === term.trim();
  const expanded = open && shown.length > 0 && !onlyTyped && !input.disabled;
  const search = (next: string) => onSearch?.(lastTerm(next, list).term.trim());
  const close = () => {
    setOpen(false);
    setActive(-1);
  };
  const commit = (next: string) => {
    close();
    if (live) {
      setDraft(next);
      onCommit(next);
      return;
    }
    setDraft(null);
    if (next.trim() !== value) onCommit(next.trim());
  };
  return (
    <span class="picker">
      <label>
        {label}
        {hint}
        <input
          {...input}
          ref={field}
          name={name}
          role="combobox"
          autocomplete="off"
          aria-autocomplete="list"
          aria-expanded={expanded}
          aria-controls={listId}
          aria-activedescendant={expanded && active >= 0 ? `${listId}-${active}` : undefined}
          value={text}
          onFocus={() => {
            setOpen(true);
            // A builder's field offers every suggestion until typed in; a form's searches what it holds.
            search(live ? text : '');
          }}
          onInput={(e) => {
            const next = e.currentTarget.value;
            setDraft(next);
            setOpen(true);
            setActive(-1);
            search(next);
            if (live) onCommit(next);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              setOpen(true);
              setActive(Math.min(active + 1, shown.length - 1));
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              setActive(Math.max(active - 1, -1));
            } else if (e.key === 'Enter') {
              const picked = expanded && active >= 0 ? shown[active] : undefined;
              // A form saved later keeps Enter for itself unless it picks a suggestion.
              if (live && !picked) return close();
              e.preventDefault();
              commit(picked ? head + picked.name : text);
            } else if (e.key === 'Escape' && expanded) {
              // Closes the list only: a dialog around the field stays open.
              e.stopPropagation();
              close();
            }
          }}
          onBlur={() => (draft !== null && !live ? commit(draft) : close())}
        />
      </label>
      {after}
      {expanded ? (
        <ul role="listbox" id={listId} class="picker-options" aria-label={`Matching ${what}`}>
          {shown.map((option, i) => (
            <li
              key={option.name}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === active}
              data-option={option.name}
              onMouseDown={(e) => {
                // Before the input's blur: the click picks this suggestion, not the text typed so far.
                e.preventDefault();
                commit(head + option.name);
              }}
            >
              <span class="picker-name">{option.name}</span>
              {option.meta ? <span class="picker-meta">{option.meta}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
    </span>
  );
}
