import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';

/** A strong ETag for a body: its SHA-256, so equal bodies (on any process) share it. */
export function etagOf(body: string | Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/**
 * Sends a body that clients may cache, with its ETag (the service apps turn Express's own ETags
 * off); a request whose If-None-Match names it gets 304 with no body (Express's `req.fresh`).
 */
export function sendCacheable(req: Request, res: Response, body: string | Buffer, options: { contentType: string; cacheControl: string; etag?: string }): void {
  res.setHeader('Content-Type', options.contentType);
  res.setHeader('Cache-Control', options.cacheControl);
  res.setHeader('ETag', options.etag ?? etagOf(body));
  if (req.fresh) {
    res.status(304).end();
    return;
  }
  res.send(body);
}
