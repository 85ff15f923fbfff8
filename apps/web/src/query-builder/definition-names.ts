import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';

/** Names for a picker from the event definitions the worker records, most seen first. */
function useDefinitionNames(path: string): string[] {
  const [names, setNames] = useState<string[]>([]);
  useEffect(() => {
    api<Page<{ name: string }>>(path)
      .then((page) => setNames(page.results.map((row) => row.name)))
      .catch(() => setNames([]));
  }, [path]);
  return names;
}

export const useEventNames = (projectId: number) => useDefinitionNames(`/api/projects/${projectId}/event_definitions/?limit=500`);

/**
 * The project's two most common events (event definitions by volume), for a funnel nobody has
 * built yet; null while they load, fewer than two when the project has fewer.
 */
export function useTopEvents(projectId: number): string[] | null {
  const [names, setNames] = useState<string[] | null>(null);
  useEffect(() => {
    api<Page<{ name: string }>>(`/api/projects/${projectId}/event_definitions/?limit=2`)
      .then((page) => setNames(page.results.map((row) => row.name)))
      .catch(() => setNames([]));
  }, [projectId]);
  return names;
}
