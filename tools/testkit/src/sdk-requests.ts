import { gunzipSync } from 'node:zlib';

/** One request an SDK made to the service, as the report lists them. */
export interface SdkRequest {
  method: string;
  /** Path and query. */
  path: string;
  status: number | 'failed' | 'no response';
  contentType: string;
  /** The Content-Encoding header ('' when none). */
  contentEncoding: string;
  body: unknown;
}

/**
 * A request body as the SDKs encode it: raw gzip (posthog-js sends it as text/plain with no
 * header saying so), `data=<base64>` forms, or plain JSON. Null when there is none.
 */
export function decodeSdkBody(raw: Buffer | null | undefined, contentType: string): unknown {
  if (!raw || raw.length === 0) return null;
  let bytes = raw;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
  let text = bytes.toString('utf8');
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    const data = new URLSearchParams(text).get('data') ?? text;
    text = Buffer.from(data, 'base64').toString('utf8');
  }
  return JSON.parse(text) as unknown;
}

/** The events of a capture body: the `{api_key, batch}` wrapper, an array, or one event. */
export function eventsOf(body: unknown): Array<Record<string, any>> {
  if (Array.isArray(body)) return body as Array<Record<string, any>>;
  if (body && typeof body === 'object' && Array.isArray((body as { batch?: unknown }).batch)) return (body as { batch: Array<Record<string, any>> }).batch;
  return body && typeof body === 'object' ? [body as Record<string, any>] : [];
}

/** `METHOD /path?query (content type) -> status [events]`, one a line, for the test output and the report. */
export function formatRequests(requests: SdkRequest[]): string {
  return requests
    .map((r) => {
      const events = r.method === 'POST' && !r.path.startsWith('/flags') ? eventsOf(r.body).map((e) => String(e['event'])) : [];
      const type = [r.contentType, r.contentEncoding].filter(Boolean).join(', ');
      return `${r.method} ${r.path}${type ? ` (${type})` : ''} -> ${r.status}${events.length ? ` [${events.join(', ')}]` : ''}`;
    })
    .join('\n');
}
