/** How many names a picker loads (definition-names.ts): a list that long may not hold every name. */
const COMPLETE_BELOW = 500;

/**
 * "never seen in this project" beside a name the project's definitions do not hold (an event,
 * a property), once they are loaded and known to be the whole list: a typo shows before the
 * empty chart does.
 */
export function UnknownName({ name, known, what }: { name: string; known: string[]; what: string }) {
  if (!name || known.length === 0 || known.length >= COMPLETE_BELOW || known.includes(name)) return null;
  return (
    <span class="unknown-name" role="note" data-testid="unknown-name">
      {what} never seen in this project
    </span>
  );
}
