import { gunzipSync } from 'node:zlib';
import { errors } from '@sightline/http';

/**
 * Decodes a capture body already read as bytes (Content-Encoding gzip is inflated by the
 * body reader): gzip detected by magic bytes (posthog-js sends it as text/plain), form
 * `data=<base64>`, or plain JSON.
 */
export function decodeCaptureBody(raw: Buffer, contentType: string | undefined, maxBytes: number): unknown {
  let bytes = raw;
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: maxBytes });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw errors.payloadTooLarge(maxBytes);
      throw errors.parse('Malformed request data: invalid gzip body');
    }
  }
  let text = bytes.toString('utf8');
  if (contentType?.startsWith('application/x-www-form-urlencoded')) {
    // `data=<base64 JSON>` (sendBeacon); a raw JSON body mislabelled as a form (curl -d) is read as is.
    const data = text.trimStart().startsWith('{') || text.trimStart().startsWith('[') ? null : new URLSearchParams(text).get('data');
    if (data !== null) text = Buffer.from(data, 'base64').toString('utf8');
  }
  if (text.trim() === '') throw errors.parse('Malformed request data: empty body');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw errors.parse(`Malformed request data: ${(error as Error).message}`);
  }
}
