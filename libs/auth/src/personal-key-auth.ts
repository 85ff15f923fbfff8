import type { RequestHandler } from 'express';
import { errors } from '@sightline/http';
import { hashPersonalApiKey } from './keys';
import { hasScope, type Scope } from './scopes';

/** What a valid personal API key (or a signed-in browser session) authenticates as. */
export interface Principal {
  userId: number;
  /** null: a browser session, which has every scope of its user. */
  keyId: number | null;
  scopes: string[];
  /** null: every project of the user's organisation. */
  scopedTeams: number[] | null;
  /** null or absent: not restricted by organisation. */
  scopedOrganizations?: string[] | null;
  organizationId: string;
}

export type PersonalKeyLookup = (hash: string) => Promise<Principal | null>;

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/** `Authorization: Bearer phx_…` → req.principal, or a DRF 401. */
export function personalKeyAuth(lookup: PersonalKeyLookup): RequestHandler {
  return async (req, _res, next) => {
    // Already authenticated by an outer layer of the same app.
    if (req.principal) return next();
    const header = req.headers.authorization;
    if (!header) return next(errors.notAuthenticated());
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) return next(errors.authenticationFailed('Authorization header must be "Bearer <personal API key>".'));
    const principal = await lookup(hashPersonalApiKey(match[1]!));
    if (!principal) return next(errors.authenticationFailed('Personal API key found in request Authorization header is invalid.'));
    req.principal = principal;
    next();
  };
}

/**
 * Per-route scope check, after personalKeyAuth: every scope given is needed, and the first one
 * missing answers PostHog's 403.
 */
export function requireScope(...scopes: Scope[]): RequestHandler {
  return (req, _res, next) => {
    const principal = req.principal;
    if (!principal) return next(errors.notAuthenticated());
    const missing = scopes.find((scope) => !hasScope(principal.scopes, scope));
    if (missing) return next(errors.permissionDenied(`API key missing required scope '${missing}'`));
    next();
  };
}
