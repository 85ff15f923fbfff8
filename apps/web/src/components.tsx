import { useState } from 'preact/hooks';
import type { ComponentChildren, JSX } from 'preact';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  return (
    <div class="state error" role="alert">
      <p>{error instanceof Error ? error.message : String(error)}</p>
      {retry && (
        <button type="button" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

export function PropertiesTable({ properties, caption }: { properties: Record<string, unknown>; caption: string }) {
  const keys = Object.keys(properties).sort();
  if (keys.length === 0) return <Empty>No properties.</Empty>;
  return (
    <table class="properties">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Property</th>
          <th scope="col">Value</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key}>
            <th scope="row">{key}</th>
            <td>{typeof properties[key] === 'string' ? (properties[key] as string) : JSON.stringify(properties[key])}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A destructive action behind a second, explicit confirmation (keyboard reachable, no browser dialog). */
export function ConfirmDelete({ what, onConfirm, children }: { what: string; onConfirm: () => Promise<void>; children?: ComponentChildren }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        Delete {what}…
      </button>
    );
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
    } catch (failure) {
      setError(failure);
      setBusy(false);
    }
  };
  return (
    <div class="confirm" role="group" aria-label={`Delete ${what}`}>
      <p>Delete {what}? This cannot be undone.</p>
      {children}
      {error ? <ErrorState error={error} /> : null}
      <button type="button" class="danger" disabled={busy} onClick={confirm}>
        {busy ? 'Deleting…' : `Yes, delete ${what}`}
      </button>{' '}
      <button type="button" class="secondary" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </div>
  );
}

/** The suggestions a text input offers through `list={id}`: event or property names from the definitions. */
export function NameOptions({ id, names }: { id: string; names: string[] }) {
  return (
    <datalist id={id}>
      {names.map((name) => (
        <option key={name} value={name} />
      ))}
    </datalist>
  );
}

/**
 * A text field whose value is committed on `change` (leaving it or Enter). What is typed is kept
 * here until then, so a re-render in between (a result arriving) does not put the old value back.
 */
export function CommitInput({
  value,
  onCommit,
  ...rest
}: { value: string; onCommit: (value: string) => void } & Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange' | 'onInput'>) {
  const [draft, setDraft] = useState<string | null>(null);
  return (
    <input
      {...rest}
      value={draft ?? value}
      onInput={(e) => setDraft(e.currentTarget.value)}
      onChange={(e) => {
        setDraft(null);
        onCommit(e.currentTarget.value.trim());
      }}
    />
  );
}

/**
 * A save's progress as one live status line: `run` shows "Saving…", then the message the save
 * answers, or its error (in the error colour); `line` is the element to place in the form.
 */
export function useSaveStatus() {
  const [status, setStatus] = useState<{ text: string; failed: boolean }>({ text: '', failed: false });
  const run = async (save: () => Promise<string>) => {
    setStatus({ text: 'Saving…', failed: false });
    try {
      setStatus({ text: await save(), failed: false });
    } catch (failure) {
      setStatus({ text: (failure as Error).message, failed: true });
    }
  };
  const line = (
    <span role="status" aria-live="polite" class={status.failed ? 'error' : undefined}>
      {status.text}
    </span>
  );
  return { run, line };
}
