import cors from 'cors';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * Security headers (helmet) for the management API's JSON answers. The API document's page sets
 * its own content security policy, as it runs the viewer's scripts.
 */
export function managementSecurityHeaders(): RequestHandler {
  return helmet({ crossOriginResourcePolicy: { policy: 'same-site' } });
}

/**
 * CORS for the management API: only the configured origins may call it from a browser, and only
 * with the Authorization header (no cookies: the web app's session cookie is for its own origin only).
 */
export function managementCors(allowedOrigins: readonly string[]): RequestHandler {
  const allowed = new Set(allowedOrigins.map((o) => o.trim().replace(/\/$/, '')).filter(Boolean));
  return cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: false,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    exposedHeaders: ['Retry-After'],
    maxAge: 600,
  });
}
