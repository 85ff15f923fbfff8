import { useEffect, useState } from 'preact/hooks';
import type { ComponentChildren, JSX } from 'preact';
import { ApiFailure } from './api';
import { linkHandler } from './router';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** A chart's place while its result loads: a grey box of the chart's size, named for screen readers. */
export function ChartSkeleton({ what }: { what: string }) {
  return (
    <div class="skeleton" role="status" aria-live="polite" data-testid="chart-skeleton">
      <span class="sr-only">Loading {what}…</span>
    </div>
  );
}

export function ErrorState({ error, retry }: { error: unknown; retry?: () => void }) {
  // No answer at all (offline, the server down): say so, and always offer to try again.
  if (error instanceof ApiFailure && error.status === 0)
    return (
      <div class="state error offline" role="alert">
        <p>
          <strong>Sightline cannot be reached.</strong> Check the connection; nothing was lost.
        </p>
        <button type="button" onClick={retry ?? (() => location.reload())}>
          Try again
        </button>
      </div>
    );
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
  return (
    <ConfirmAction
      start={`Delete ${what}…`}
      question={`Delete ${what}? This cannot be undone.`}
      confirm={`Yes, delete ${what}`}
      busy="Deleting…"
      groupLabel={`Delete ${what}`}
      onConfirm={onConfirm}
    >
      {children}
    </ConfirmAction>
  );
}

/** An action that cannot be taken back, asked for twice: `start` opens the question, `confirm` does it. */
export function ConfirmAction({
  start,
  startLabel,
  question,
  confirm,
  busy: busyText,
  groupLabel,
  onConfirm,
  children,
}: {
  start: string;
  /** The start button's accessible name when its text is short. */
  startLabel?: string;
  question: string;
  confirm: string;
  busy: string;
  groupLabel: string;
  onConfirm: () => Promise<void>;
  children?: ComponentChildren;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (!asking)
    return (
      <button type="button" class="danger" aria-label={startLabel} onClick={() => setAsking(true)}>
        {start}
      </button>
    );
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      setAsking(false);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="confirm" role="group" aria-label={groupLabel}>
      <p>{question}</p>
      {children}
      {error ? <ErrorState error={error} /> : null}
      <button type="button" class="danger" disabled={busy} onClick={run}>
        {busy ? busyText : confirm}
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
 * A list page's body: its error (with a retry), loading and empty states, then the table, one
 * row per item from `row` (which returns the <tr>). `items` null: still loading.
 */
export function ListView<T>({
  items,
  error,
  retry,
  what,
  empty,
  caption,
  testId,
  head,
  headClasses = [],
  row,
}: {
  items: T[] | null;
  error: unknown;
  retry?: () => void;
  /** For "Loading …". */
  what: string;
  empty: ComponentChildren;
  caption: string;
  testId: string;
  head: ComponentChildren[];
  /** A class per column heading (e.g. `hide-narrow`, matching its cells). */
  headClasses?: (string | undefined)[];
  row: (item: T) => ComponentChildren;
}) {
  if (error) return <ErrorState error={error} retry={retry} />;
  if (items === null) return <Loading what={what} />;
  if (items.length === 0) return <Empty>{empty}</Empty>;
  return (
    <div class="table-scroll">
      <table class="list" data-testid={testId}>
        <caption class="sr-only">{caption}</caption>
        <thead>
          <tr>
            {head.map((label, i) => (
              <th key={i} scope="col" class={headClasses[i]}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{items.map(row)}</tbody>
      </table>
    </div>
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

/** A page for an address or an object that does not exist: a heading, what was asked for, and a way back. */
export function NotFound({ what, back }: { what: ComponentChildren; back: { href: string; label: string } }) {
  return (
    <section aria-labelledby="not-found-title" class="not-found">
      <h1 id="not-found-title">Not found</h1>
      <p>{what}</p>
      <p>
        <a href={back.href} onClick={linkHandler(back.href)}>
          {back.label}
        </a>
      </p>
    </section>
  );
}

/** A failed read: "Not found" (with a way back) for a 404, else the error with a retry. */
export function LoadFailure({
  error,
  retry,
  what,
  back,
}: {
  error: unknown;
  retry: () => void;
  what: ComponentChildren;
  back: { href: string; label: string };
}) {
  if (error instanceof ApiFailure && error.status === 404) return <NotFound what={what} back={back} />;
  return <ErrorState error={error} retry={retry} />;
}

/** Copies `text` to the clipboard; says "Copied" for a moment, or that it could not (the text stays selectable). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
      setTimeout(() => setState('idle'), 2000);
    } catch {
      setState('failed');
    }
  };
  return (
    <button type="button" class="secondary" onClick={copy} aria-label={label}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select it' : 'Copy'}
    </button>
  );
}

/** A line across the top while the browser says it is offline (its `offline` / `online` events). */
export function OfflineBanner() {
  const [offline, setOffline] = useState(() => typeof navigator !== 'undefined' && navigator.onLine === false);
  useEffect(() => {
    const update = () => setOffline(navigator.onLine === false);
    window.addEventListener('online', update);
    window.addEventListener('offline', update);
    return () => {
      window.removeEventListener('online', update);
      window.removeEventListener('offline', update);
    };
  }, []);
  if (!offline) return null;
  return (
    <p class="offline-banner" role="status">
      You are offline: what you do now may not be saved until the connection is back.
    </p>
  );
}
