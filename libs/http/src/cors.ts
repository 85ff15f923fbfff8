import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';

/**
 * CORS for the public endpoints browsers call from any site (capture, decide, flags):
 * the origin and requested headers are mirrored, and a preflight answers 200 with
 * `{"status":1}` (posthog-js counts only 200 as success). No credentials: the project key
 * travels in the body, and posthog-js's fetch sends no cookies cross-site, so a browser
 * never needs to share a session with these endpoints.
 */
export function publicCors(methods = 'GET, POST, OPTIONS'): RequestHandler {
  return (req, res, next) => {
    setPublicCorsHeaders(req, res, methods);
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', methods);
      res.status(200).json({ status: 1 });
      return;
    }
    next();
  };
}

/** publicCors's headers on any response, also a bare node:http one answered before Express. */
export function setPublicCorsHeaders(req: IncomingMessage, res: ServerResponse, methods: string): void {
  res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
  res.setHeader('Access-Control-Allow-Methods', methods);
  res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'content-type');
  res.setHeader('Vary', 'Origin');
}
