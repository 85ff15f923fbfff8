import { useEffect, useState } from 'preact/hooks';
import { api } from './api';

/**
 * POSTs a query and holds its answer: `body` is the request as JSON text, so an equal request is
 * not asked again; a newer one aborts the older. A null body asks nothing.
 */
export function usePost<T>(path: string, body: string | null): { answer: T | null; error: unknown } {
  const [answer, setAnswer] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setAnswer(null);
    setError(null);
    if (body === null) return;
    const controller = new AbortController();
    api<T>(path, { method: 'POST', body: JSON.parse(body) as unknown, signal: controller.signal })
      .then(setAnswer)
      .catch((failure) => {
        if ((failure as Error).name !== 'AbortError') setError(failure);
      });
    return () => controller.abort();
  }, [path, body]);
  return { answer, error };
}
