import { useEffect, useState } from 'preact/hooks';
import { api } from './api';

/**
 * POSTs a query and holds its answer: `body` is the request as JSON text, so an equal request is
 * not asked again; a newer one aborts the older. A null body asks nothing.
 *
 * The answer is kept with the request it answers and given only while that request is current: the
 * effect that asks again runs after the render that changed the request, and that render must not
 * draw the previous answer in the new request's form.
 */
export function usePost<T>(path: string, body: string | null): { answer: T | null; error: unknown } {
  const request = `${path}\n${body}`;
  const [outcome, setOutcome] = useState<{ request: string; answer: T | null; error: unknown }>({ request: '', answer: null, error: null });
  useEffect(() => {
    if (body === null) return;
    const controller = new AbortController();
    api<T>(path, { method: 'POST', body: JSON.parse(body) as unknown, signal: controller.signal })
      .then((answer) => setOutcome({ request, answer, error: null }))
      .catch((failure) => {
        if ((failure as Error).name !== 'AbortError') setOutcome({ request, answer: null, error: failure });
      });
    return () => controller.abort();
  }, [path, body]);
  return outcome.request === request ? { answer: outcome.answer, error: outcome.error } : { answer: null, error: null };
}
