import { api, hasSessionCookie, type Me } from './api';
import { funnelFilters, funnelQueryFromUrl, queryFromUrl, trendRequestBody } from './insight-query';
import { TOP_EVENTS_PATH } from './top-events-path';

/**
 * The requests a page opened from its address needs first, started as soon as the bundle starts:
 * main.tsx imports this module first, so they are on their way while the rest of the bundle
 * (Chart.js, Luxon, every page) is evaluated. The user (`@me`: the project and its timezone) and
 * the page's own query go out side by side; the page takes its query's answer when it asks the
 * same thing, instead of waiting for the user before asking.
 *
 * The query is asked of `@current`, the caller's first project, which is the project `@me`
 * answers (both are the first of the caller's projects), so it is the request the page makes.
 */

/**
 * The first request of the page at `url`, its project named `@current`, or null for a page that
 * has none worth starting early.
 */
export function pageFirstRequest(url: URL): { path: string; method: 'GET' | 'POST'; body?: string } | null {
  if (url.pathname === '/trends') {
    const body = trendRequestBody(queryFromUrl(url));
    return body === null ? null : { method: 'POST', path: '/api/environments/@current/insights/trend/', body };
  }
  if (url.pathname === '/funnels')
    return url.searchParams.get('q')
      ? { method: 'POST', path: '/api/environments/@current/insights/funnel/', body: JSON.stringify(funnelFilters(funnelQueryFromUrl(url))) }
      : // A new funnel first looks up its steps, the project's two most common events.
        { method: 'GET', path: TOP_EVENTS_PATH('@current') };
  const dashboard = /^\/dashboards\/(\d+)$/.exec(url.pathname);
  if (dashboard) return { method: 'GET', path: `/api/environments/@current/dashboards/${dashboard[1]}/?refresh=force_cache` };
  return null;
}

const key = (method: string, path: string, body: string | undefined) => `${method} ${path}\n${body ?? ''}`;

let me: Promise<Me> | null = null;
const early = new Map<string, Promise<unknown>>();
if (hasSessionCookie()) {
  me = api<Me>('/api/users/@me/');
  const first = pageFirstRequest(new URL(location.href));
  if (first) {
    const body = first.body === undefined ? undefined : (JSON.parse(first.body) as unknown);
    early.set(key(first.method, first.path, first.body), api(first.path, { method: first.method, body }));
  }
  // Failures are the app's to show when it takes the answers; until then they are not unhandled.
  for (const pending of early.values()) pending.catch(() => undefined);
  // No user (the session ended): the sign-in page comes first, and the pages ask afresh after it.
  me.catch(() => early.clear());
}

/** The user asked for at start, once; null after, or when there was no session to ask about. */
export function takeEarlyMe(): Promise<Me> | null {
  const taken = me;
  me = null;
  return taken;
}

/**
 * The answer to `method path body` (path: `/api/environments/<id>/…` or `/api/projects/<id>/…`)
 * if it was started early, once; null otherwise (the caller asks itself).
 */
export function takeEarlyRequest<T>(method: string, path: string, body: string | undefined): Promise<T> | null {
  const k = key(method, path.replace(/^\/api\/(environments|projects)\/\d+\//, '/api/$1/@current/'), body);
  const taken = early.get(k);
  early.delete(k);
  return (taken as Promise<T> | undefined) ?? null;
}
