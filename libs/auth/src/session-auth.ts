import type { Request, RequestHandler } from 'express';
import { parse as parseCookies } from 'cookie';
import { errors } from '@sightline/http';
import { hashSecretToken, sameSecret } from './passwords';
import { personalKeyAuth, type PersonalKeyLookup, type Principal } from './personal-key-auth';

/** The browser session: HttpOnly, so page scripts never see it. */
export const SESSION_COOKIE = 'sightline_session';
/** The session's CSRF token, readable by the page, which sends it back in CSRF_HEADER on writes. */
export const CSRF_COOKIE = 'sightline_csrftoken';
export const CSRF_HEADER = 'x-csrftoken';

export interface SessionInfo {
  principal: Principal;
  csrfToken: string;
}

/** A session by its token's hash, or null when there is none or it expired. */
export type SessionLookup = (tokenHash: string) => Promise<SessionInfo | null>;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function sessionTokenOf(req: Request): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  return parseCookies(header)[SESSION_COOKIE] || null;
}

/**
 * This app's own origin as the browser sees it: the scheme (`X-Forwarded-Proto` only from a
 * trusted proxy), the host and the port (`Host`, or `X-Forwarded-Host` from a trusted proxy), as
 * Express's `req.protocol` and `req.host` read them under the 'trust proxy' setting
 * (TRUSTED_PROXIES). Null when the request names no usable host.
 */
function ownOrigin(req: Request): string | null {
  const host = req.host;
  if (!host) return null;
  try {
    return new URL(`${req.protocol}://${host}`).origin;
  } catch {
    return null;
  }
}

function originOf(header: string): string | null {
  try {
    const origin = new URL(header).origin;
    // Opaque origins (`null`, `file:`, `data:`) never match.
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Why a write made with a session cookie is refused, or null. Two checks, as Django's CSRF
 * middleware makes them: the X-CSRFToken header must equal the session's own token (a
 * synchronizer token: another site can make the browser send the cookie, but cannot read the
 * token), and an Origin header, when the browser sends one, must be this app's own origin:
 * scheme, host and port (Django's `good_origin`), so a page served over plain HTTP on the same
 * host, or on another port of it, is another site. SameSite=Lax on the cookie already keeps it
 * off cross-site POSTs in current browsers; these hold without it.
 */
export function csrfProblem(req: Request, csrfToken: string): string | null {
  if (SAFE_METHODS.has(req.method)) return null;
  const origin = req.headers.origin;
  if (origin !== undefined) {
    const own = ownOrigin(req);
    if (own === null || originOf(origin) !== own) return 'CSRF Failed: Origin checking failed - the request comes from another site.';
  }
  const header = req.headers[CSRF_HEADER];
  if (typeof header !== 'string' || header === '') return 'CSRF Failed: CSRF token missing.';
  if (!sameSecret(header, csrfToken)) return 'CSRF Failed: CSRF token incorrect.';
  return null;
}

/**
 * The management API's authentication: a personal API key in `Authorization: Bearer …` (server
 * to server), else the web app's session cookie (a signed-in browser, with every scope of its
 * user, and CSRF checks on writes). A request with an Authorization header is judged by it alone.
 */
export function managementAuth(options: { personalKeys: PersonalKeyLookup; sessions: SessionLookup }): RequestHandler {
  const byKey = personalKeyAuth(options.personalKeys);
  return async (req, res, next) => {
    // Already authenticated by an outer layer of the same app.
    if (req.principal) return next();
    if (req.headers.authorization !== undefined) return byKey(req, res, next);
    const token = sessionTokenOf(req);
    if (!token) return next(errors.notAuthenticated());
    const session = await options.sessions(hashSecretToken(token));
    if (!session) return next(errors.authenticationFailed('Your session has expired. Sign in again.'));
    const problem = csrfProblem(req, session.csrfToken);
    if (problem) return next(errors.permissionDenied(problem));
    req.principal = session.principal;
    next();
  };
}
