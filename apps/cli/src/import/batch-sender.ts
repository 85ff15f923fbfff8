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

export interface SendOptions {
  /** Most attempts for one batch before the import gives up. */
  maxAttempts: number;
  /** Heard before each wait: why, and for how long. */
  onRetry(reason: string, waitMs: number): void;
  signal?: AbortSignal;
  fetch?: typeof fetch;
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
 * POSTs one `/batch/` body until the service acknowledges it. 429, 5xx and network errors are
 * retried with backoff and jitter, waiting at least what `Retry-After` asks; any other 4xx
 * stops the import with the service's own message.
 */
export async function sendBatch(url: string, body: string, options: SendOptions): Promise<void> {
  const post = options.fetch ?? fetch;
  for (let attempt = 0; ; attempt++) {
    let waitMs: number;
    let reason: string;
    try {
      const response = await post(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, signal: options.signal });
      const text = await response.text();
      if (response.ok) return;
      if (response.status !== 429 && response.status < 500) throw new BatchRefusedError(response.status, detailOf(text));
      reason = `${response.status} ${detailOf(text)}`;
      waitMs = Math.max(retryAfterMs(response.headers.get('retry-after')) ?? 0, backoffMs(attempt));
    } catch (error) {
      if (error instanceof BatchRefusedError || options.signal?.aborted) throw error;
      reason = error instanceof Error ? error.message : String(error);
      waitMs = backoffMs(attempt);
    }
    if (attempt + 1 >= options.maxAttempts) throw new Error(`a batch failed ${options.maxAttempts} times; last: ${reason}`);
    options.onRetry(reason, waitMs);
    await sleep(waitMs, undefined, { signal: options.signal });
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
