import { setTimeout as sleep } from 'node:timers/promises';

/** The service refused a batch for good (a 4xx other than 429): the import stops with its message. */
export class BatchRefusedError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`the service refused a batch (${status}): ${detail}`);
  }
}

/** The host never answered: nothing was ever sent, so the import stops instead of retrying for minutes. */
export class HostUnreachableError extends Error {}

/** An event of a batch the service answered 200 but did not store (docs/http-api.md#capture-answers). */
export interface DroppedByService {
  index: number;
  reason: string;
}

/** What the host has shown so far: shared by every batch of a run. */
export interface HostContact {
  /** Some request got an HTTP answer (any status): the address is right, later network errors are outages. */
  answered: boolean;
}

export interface SendOptions {
  /** Most attempts for one batch before the import gives up. */
  maxAttempts: number;
  /** Heard before each wait: why, and for how long. */
  onRetry(reason: string, waitMs: number): void;
  signal?: AbortSignal;
  fetch?: typeof fetch;
  /** Shared by the run's batches; absent: every failure is retried up to maxAttempts. */
  contact?: HostContact;
  /** How a wait between attempts is spent (tests pass one that returns at once). */
  wait?: (ms: number, signal?: AbortSignal) => Promise<unknown>;
}

/** Network failures tolerated before the host has ever answered (about 15 s of backoff). */
export const FIRST_CONTACT_ATTEMPTS = 5;

/** A network failure in words, naming the host: fetch itself says only "fetch failed". */
export function describeNetworkError(error: unknown, url: string): { text: string; permanent: boolean } {
  const host = new URL(url).host;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : null;
  if (code === 'ECONNREFUSED') return { text: `connection refused by ${host} (is Sightline listening there?)`, permanent: false };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { text: `host ${new URL(url).hostname} not found (${code})`, permanent: code === 'ENOTFOUND' };
  if (code) return { text: `${code} from ${host}: ${String(cause?.message ?? '')}`, permanent: false };
  const message = typeof cause?.message === 'string' ? cause.message : error instanceof Error ? error.message : String(error);
  // fetch refuses some ports and URLs before connecting ("bad port"): retrying cannot help.
  return { text: `${host}: ${message}`, permanent: cause !== undefined && code === null };
}

/** The `dropped` list of a 200 answer, when it has one. */
function droppedOf(text: string): DroppedByService[] {
  try {
    const body = JSON.parse(text) as { dropped?: unknown };
    if (!Array.isArray(body.dropped)) return [];
    return body.dropped.filter(
      (d): d is DroppedByService =>
        typeof d === 'object' && d !== null && typeof (d as DroppedByService).index === 'number' && typeof (d as DroppedByService).reason === 'string',
    );
  } catch {
    return [];
  }
}

/** `Retry-After` in seconds or as an HTTP date, in milliseconds from now; null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs = Date.now()): number | null {
  if (header === null || header.trim() === '') return null;
  if (/^\d+(\.\d+)?$/.test(header.trim())) return Number(header) * 1000;
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : null;
}

/** Exponential backoff with full jitter, capped: 0.5 s, 1 s, 2 s … up to 30 s. */
export const backoffMs = (attempt: number, random = Math.random) => Math.round(random() * Math.min(30_000, 500 * 2 ** attempt));

function detailOf(text: string): string {
  try {
    const body = JSON.parse(text) as { detail?: unknown };
    if (typeof body.detail === 'string') return body.detail;
  } catch {
    // not JSON
  }
  return text.slice(0, 300);
}

/**
 * POSTs one `/batch/` body until the service acknowledges it, and returns the events it says it
 * dropped. 429, 5xx and network errors are retried with backoff and jitter, waiting at least
 * what `Retry-After` asks; any other 4xx stops the import with the service's own message. Until
 * the host has answered once, a host that does not exist stops the import at once and other
 * network errors after FIRST_CONTACT_ATTEMPTS: a wrong address is a mistake, not an outage.
 */
export async function sendBatch(url: string, body: string, options: SendOptions): Promise<DroppedByService[]> {
  const post = options.fetch ?? fetch;
  for (let attempt = 0; ; attempt++) {
    let waitMs: number;
    let reason: string;
    try {
      const response = await post(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, signal: options.signal });
      if (options.contact) options.contact.answered = true;
      const text = await response.text();
      if (response.ok) return droppedOf(text);
      if (response.status !== 429 && response.status < 500) throw new BatchRefusedError(response.status, detailOf(text));
      reason = `${response.status} ${detailOf(text)}`;
      waitMs = Math.max(retryAfterMs(response.headers.get('retry-after')) ?? 0, backoffMs(attempt));
    } catch (error) {
      if (error instanceof BatchRefusedError || options.signal?.aborted) throw error;
      const network = describeNetworkError(error, url);
      reason = network.text;
      waitMs = backoffMs(attempt);
      if (options.contact && !options.contact.answered && (network.permanent || attempt + 1 >= FIRST_CONTACT_ATTEMPTS)) {
        throw new HostUnreachableError(`cannot reach ${url}: ${reason}`);
      }
    }
    if (attempt + 1 >= options.maxAttempts) throw new Error(`a batch failed ${options.maxAttempts} times; last: ${reason}`);
    options.onRetry(reason, waitMs);
    await (options.wait ? options.wait(waitMs, options.signal) : sleep(waitMs, undefined, { signal: options.signal }));
  }
}

/** A token bucket: at most `perSecond` events a second on average, bursts up to one second's worth. */
export class RateLimiter {
  private tokens: number;
  private last = Date.now();

  constructor(private readonly perSecond: number) {
    this.tokens = perSecond;
  }

  async take(count: number): Promise<void> {
    for (;;) {
      const now = Date.now();
      this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.last) / 1000) * this.perSecond);
      this.last = now;
      // A batch larger than the bucket waits until the bucket is full, then goes.
      const needed = Math.min(count, this.perSecond);
      if (this.tokens >= needed) {
        this.tokens -= count;
        return;
      }
      await sleep(Math.ceil(((needed - this.tokens) / this.perSecond) * 1000));
    }
  }
}
