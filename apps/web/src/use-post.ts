import { useEffect, useState } from 'preact/hooks';
import { api } from './api';
import { takeEarlyRequest } from './early-requests';

/**
 * POSTs a query and holds its answer: `body` is the request as JSON text, so an equal request is
 * not asked again; a newer one aborts the older. A null body asks nothing. `refresh` asks the same
 * request again with `refresh: true` (the server computes it afresh instead of answering from its
 * cache); the answer shown meanwhile stays, with `refreshing` true.
 *
 * The answer is kept with the request it answers and given only while that request is current: the
 * effect that asks again runs after the render that changed the request, and that render must not
 * draw the previous answer in the new request's form.
 */
export function usePost<T>(path: string, body: string | null): { answer: T | null; error: unknown; refresh: () => void; refreshing: boolean } {
  const request = `${path}\n${body}`;
  const [outcome, setOutcome] = useState<{ request: string; answer: T | null; error: unknown }>({ request: '', answer: null, error: null });
  const [refreshes, setRefreshes] = useState<{ request: string; count: number }>({ request: '', count: 0 });
  const [refreshing, setRefreshing] = useState(false);
  const refreshCount = refreshes.request === request ? refreshes.count : 0;
  useEffect(() => {
    if (body === null) return;
    const controller = new AbortController();
    const parsed = JSON.parse(body) as Record<string, unknown>;
    setRefreshing(refreshCount > 0);
    // The page's first query may have been started at boot, beside the user (early-requests.ts).
    const early = refreshCount > 0 ? null : takeEarlyRequest<T>('POST', path, body);
    (early ?? api<T>(path, { method: 'POST', body: refreshCount > 0 ? { ...parsed, refresh: true } : parsed, signal: controller.signal }))
      .then((answer) => setOutcome({ request, answer, error: null }))
      .catch((failure) => {
        if ((failure as Error).name !== 'AbortError') setOutcome({ request, answer: null, error: failure });
      })
      .finally(() => {
        if (!controller.signal.aborted) setRefreshing(false);
      });
    return () => controller.abort();
  }, [path, body, refreshCount]);
  const current = outcome.request === request;
  return {
    answer: current ? outcome.answer : null,
    error: current ? outcome.error : null,
    refresh: () => setRefreshes({ request, count: refreshCount + 1 }),
    refreshing,
  };
}
