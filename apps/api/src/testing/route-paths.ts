import { exampleQueryString, type RouteDefinition } from '../http/route-registry';

/** Concrete values for the parameters of registry paths; `id` is a flag's unless the path says otherwise. */
export interface RouteIds {
  project_id: string;
  organization_id?: string;
  action_id?: string;
  dashboard_id?: string;
  cohort_id?: string;
  insight_id?: string;
  flag_id?: string;
  role_access_id?: string;
  role_id?: string;
  membership_id?: string;
  key_id?: string;
  [other: string]: string | undefined;
}

/**
 * A registry path with every `:param` replaced, ending in a slash as clients send it, followed by
 * the route's required query parameters (their declared examples).
 */
export function fillPath(route: Pick<RouteDefinition, 'path' | 'query'>, ids: RouteIds): string {
  const filled = route.path.replace(/:([A-Za-z_]+)/g, (_m, name: string, offset: number) => {
    let key = name;
    if (name === 'feature_flag_id') key = 'flag_id';
    if (name === 'id') key = route.path.slice(0, offset).endsWith('role_access/') ? 'role_access_id' : 'flag_id';
    return encodeURIComponent(ids[key] ?? '0');
  });
  return `${filled.endsWith('/') ? filled : `${filled}/`}${exampleQueryString(route)}`;
}
