import type { IncomingMessage } from 'node:http';
import { createGunzip, type Gunzip } from 'node:zlib';
import { errors } from '@sightline/http';
import type { Lz64Decoder } from './lz64-decoder';

/** How much a capture route reads: bytes on the wire, and bytes after decompression/decoding. */
export interface BodyLimits {
  wireBytes: number;
  decodedBytes: number;
}

/** `compression` as PostHog clients announce it (query string or form field). */
export type Compression = 'gzip' | 'lz64' | 'base64' | null;

export function readCompression(value: unknown): Compression {
  if (value === 'gzip' || value === 'gzip-js') return 'gzip';
  if (value === 'lz64' || value === 'lz-string') return 'lz64';
  if (value === 'base64') return 'base64';
  return null;
}

const GZIP_MAGIC_0 = 0x1f;
const GZIP_MAGIC_1 = 0x8b;

class RequestAborted extends Error {
  /** The error handler's marker for "the client went away": nothing to answer. */
  readonly type = 'request.aborted';
}

/**
 * Reads a capture body as bytes, enforcing both caps while the bytes arrive:
 * - a declared Content-Length over the wire cap is refused before reading; the rest of the
 *   body is then drained by node after the 413 is sent, so the keep-alive connection stays usable;
 * - gzip is recognised by the body's first bytes (`1f 8b`) alone, whatever the request says:
 *   PostHog's capture does not trust the hint either (rust/capture/src/v0_request.rs,
 *   RawRequest::from_bytes), as clients send gzip without one (posthog-js as text/plain) and a
 *   hint over a body that is not gzip (`?compression=gzip-js` on form data). It is inflated as a
 *   stream and abandoned as soon as the output passes the decoded budget, so a gzip bomb never
 *   allocates more than that budget.
 * Raw-body/express.raw is not used: it needs the type-is/content-type machinery on every request
 * and buffers the compressed and decompressed body whole before any limit on the output applies.
 */
export function readCaptureBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limits.wireBytes) return Promise.reject(errors.payloadTooLarge(limits.wireBytes));
  return new Promise<Buffer>((resolve, reject) => new BodyReader(req, limits, resolve, reject).start());
}

/**
 * One body being read. A class rather than closures: the listeners are the only functions
 * created per request (tsx/esbuild wraps every named closure in a __name call, per request).
 * Listeners stay attached after settling (each handler checks `settled`): removing them costs
 * more than it saves on a request object that is about to be dropped.
 */
class BodyReader {
  private wireBytes = 0;
  private decodedBytes = 0;
  private readonly chunks: Buffer[] = [];
  /** First byte kept until gzip can be sniffed from two. */
  private pendingHead: Buffer | null = null;
  /** undefined: not decided yet; null: not gzip. */
  private gunzip: Gunzip | null | undefined;
  private settled = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly limits: BodyLimits,
    private readonly resolve: (body: Buffer) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  start(): void {
    this.req.on('data', (chunk: Buffer) => this.onData(chunk));
    this.req.on('end', () => this.onEnd());
    // A client that goes away mid-body surfaces here as ECONNRESET "aborted".
    this.req.on('error', (error: NodeJS.ErrnoException) => this.fail(error.code === 'ECONNRESET' ? new RequestAborted('client closed the request') : error));
  }

  private fail(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.gunzip?.destroy();
    // Keep the request flowing (data discarded) so node can reuse the connection.
    this.req.resume();
    this.reject(error);
  }

  private succeed(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve(this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.decodedBytes));
  }

  private collect(chunk: Buffer): void {
    if (this.settled) return;
    this.decodedBytes += chunk.length;
    if (this.decodedBytes > this.limits.decodedBytes) return this.fail(errors.payloadTooLarge(this.limits.decodedBytes));
    this.chunks.push(chunk);
  }

  private startGunzip(): Gunzip {
    const stream = createGunzip();
    stream.on('data', (chunk: Buffer) => this.collect(chunk));
    stream.on('end', () => this.succeed());
    stream.on('error', () => this.fail(errors.parse('Malformed request data: invalid gzip body')));
    // Backpressure: the socket waits while zlib works through what it already has.
    stream.on('drain', () => this.req.resume());
    return stream;
  }

  private onData(chunk: Buffer): void {
    if (this.settled) return;
    this.wireBytes += chunk.length;
    if (this.wireBytes > this.limits.wireBytes) return this.fail(errors.payloadTooLarge(this.limits.wireBytes));
    if (this.gunzip === undefined) {
      const head: Buffer = this.pendingHead ? Buffer.concat([this.pendingHead, chunk]) : chunk;
      if (head.length < 2) {
        this.pendingHead = head;
        return;
      }
      this.pendingHead = null;
      this.gunzip = head[0] === GZIP_MAGIC_0 && head[1] === GZIP_MAGIC_1 ? this.startGunzip() : null;
      chunk = head;
    }
    if (this.gunzip) {
      if (!this.gunzip.write(chunk)) this.req.pause();
    } else this.collect(chunk);
  }

  private onEnd(): void {
    if (this.settled) return;
    if (this.gunzip === undefined) {
      this.gunzip = null;
      if (this.pendingHead) this.collect(this.pendingHead);
    }
    if (this.gunzip) this.gunzip.end();
    else this.succeed();
  }
}

const STRICT_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const looksLikeJson = (text: string) => {
  const first = text.trimStart().charCodeAt(0);
  return first === 0x7b /* { */ || first === 0x5b; /* [ */
};

function decodeBase64Text(data: string): string {
  const text = Buffer.from(data.trim(), 'base64').toString('utf8');
  if (text === '') throw errors.parse('Malformed request data: invalid base64 data');
  return text;
}

async function decodeLz64(data: string, maxChars: number, decoder: Lz64Decoder): Promise<string> {
  const result = await decoder.decode(data.trim(), maxChars);
  if (result.ok) return result.text;
  if (result.reason === 'too_large') throw errors.payloadTooLarge(maxChars);
  throw errors.parse('Malformed request data: invalid lz64 data');
}

/**
 * Turns the (already inflated) body bytes into JSON text the way PostHog's capture does:
 * form `data=` (base64, or lz64 with `compression=lz64`), a raw lz64 or base64 body, and a
 * legacy payload that is still strict base64 after all that.
 */
export async function decodeCaptureText(
  bytes: Buffer,
  contentType: string | undefined,
  compression: Compression,
  limits: BodyLimits,
  lz64: Lz64Decoder,
): Promise<string> {
  let text = bytes.toString('utf8');
  if (contentType?.startsWith('application/x-www-form-urlencoded') && !looksLikeJson(text)) {
    const form = new URLSearchParams(text);
    const data = form.get('data');
    if (data === null) throw errors.parse('Malformed request data: form body without a data field');
    compression = readCompression(form.get('compression')) ?? compression;
    text = compression === 'lz64' ? await decodeLz64(data, limits.decodedBytes, lz64) : decodeBase64Text(data);
  } else if (compression === 'lz64' && !looksLikeJson(text)) {
    text = await decodeLz64(text, limits.decodedBytes, lz64);
  } else if (compression === 'base64' && !looksLikeJson(text)) {
    text = decodeBase64Text(text);
  }
  // Legacy endpoints: a payload that still reads as strict base64 is decoded once more.
  if (!looksLikeJson(text) && text.length >= 4 && STRICT_BASE64.test(text.trim())) text = decodeBase64Text(text);
  return text;
}

/** JSON.parse with PostHog's 400 for anything that is not JSON. */
export function parseCaptureJson(text: string): unknown {
  if (text.trim() === '') throw errors.parse('Malformed request data: empty body');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw errors.parse(`Malformed request data: ${(error as Error).message}`);
  }
}
