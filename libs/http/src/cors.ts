import type { RequestHandler } from 'express';

/**
 * CORS for the public endpoints browsers call from any site (capture, decide, flags):
 * the origin and requested headers are mirrored, credentials allowed, and a preflight
 * answers 200 with `{"status":1}` (posthog-js counts only 200 as success).
 */
export function publicCors(methods = 'GET, POST, OPTIONS'): RequestHandler {
  return (req, res, next) => {
    res.setHeader('Access-Control-Allow-Origin', req.headers.origin ?? '*');
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Access-Control-Allow-Methods', methods);
    res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'content-type');
    res.setHeader('Vary', 'Origin');
    if (req.method === 'OPTIONS') {
      res.setHeader('Allow', methods);
      res.status(200).json({ status: 1 });
      return;
    }
    next();
  };
}
