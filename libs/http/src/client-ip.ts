import type { IncomingMessage } from 'node:http';

/**
 * The client's address: the first X-Forwarded-For entry (the address the first proxy saw, as
 * nginx in the distributed deployment sets it), else the socket's peer. One rule for capture's
 * `$ip` and decide's `$geoip_*`, and for anything that will key on the client.
 */
export function clientIp(req: IncomingMessage): string | null {
  const forwarded = req.headers['x-forwarded-for'];
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first || req.socket.remoteAddress || null;
}
