import { useEffect, useState } from 'preact/hooks';
import { api, type Page } from '../api';
import { takeEarlyRequest } from '../early-requests';
import { afterFirstResult } from '../first-result';
import { TOP_EVENTS_PATH } from '../top-events-path';

/** Names for a picker from the event definitions the worker records, most seen first. */
function useDefinitionNames(path: string): string[] {
  const [names, setNames] = useState<string[]>([]);
  useEffect(() => {
    afterFirstResult(() => api<Page<{ name: string }>>(path))
      .then((page) => setNames(page.results.map((row) => row.name)))
      .catch(() => setNames([]));
  }, [path]);
  return names;
}

export const useEventNames = (projectId: number) => useDefinitionNames(`/api/projects/${projectId}/event_definitions/?limit=500`);

/**
 * The project's two most common events (event definitions by volume), for a funnel nobody has
 * built yet; null while they load, fewer than two when the project has fewer. A null project
 * asks nothing (a funnel that has its steps).
 */
export function useTopEvents(projectId: number | null): string[] | null {
  const [names, setNames] = useState<string[] | null>(null);
  useEffect(() => {
    if (projectId === null) return;
    // Started at boot when the page was opened from its address (early-requests.ts).
    const path = TOP_EVENTS_PATH(projectId);
    (takeEarlyRequest<Page<{ name: string }>>('GET', path, undefined) ?? api<Page<{ name: string }>>(path))
      .then((page) => setNames(page.results.map((row) => row.name)))
      .catch(() => setNames([]));
  }, [projectId]);
  return names;
}
