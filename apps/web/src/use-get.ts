import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from './api';

/**
 * GETs `path` and holds its answer, its error and a retry; `reload` asks again (after a save).
 * A newer path aborts the older request, so an old answer never lands on a new page.
 */
export function useGet<T>(path: string | null): { data: T | null; error: unknown; reload: () => void; set: (value: T) => void } {
  const [state, setState] = useState<{ path: string | null; data: T | null; error: unknown }>({ path: null, data: null, error: null });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    setState({ path, data: null, error: null });
    api<T>(path, { signal: controller.signal })
      .then((data) => setState({ path, data, error: null }))
      .catch((error) => {
        if ((error as Error).name !== 'AbortError') setState({ path, data: null, error });
      });
    return () => controller.abort();
  }, [path, attempt]);
  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  const set = useCallback((data: T) => setState({ path, data, error: null }), [path]);
  return state.path === path ? { data: state.data, error: state.error, reload, set } : { data: null, error: null, reload, set };
}
