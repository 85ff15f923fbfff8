export interface WaitForOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Pause between attempts (default 100 ms). */
  intervalMs?: number;
  /** Named in the timeout error, e.g. 'events to reach ClickHouse'. */
  description?: string;
  /** Give up at once when `fn` throws an error this accepts (e.g. the process being waited on died). */
  bailOn?: (error: unknown) => boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `fn` until it neither throws nor returns `false`, and resolves with its
 * result. Works with predicates (`() => count() === 3`) and with assertions
 * (`async () => expect(await count()).toBe(3)`). On timeout it throws an error
 * carrying the last thrown error (as `cause`) or the last returned value.
 */
export async function waitFor<T>(fn: () => T | Promise<T>, options: WaitForOptions = {}): Promise<Exclude<T, false>> {
  const { timeoutMs = 10_000, intervalMs = 100, description, bailOn } = options;
  const deadline = Date.now() + timeoutMs;
  let last: { error: unknown } | { value: unknown } = { value: undefined };
  for (;;) {
    try {
      const value = await fn();
      if (value !== false) return value as Exclude<T, false>;
      last = { value };
    } catch (error) {
      if (bailOn?.(error)) throw error;
      last = { error };
    }
    if (Date.now() + intervalMs > deadline) break;
    await sleep(intervalMs);
  }
  const what = description ? ` for ${description}` : '';
  if ('error' in last) {
    const message = last.error instanceof Error ? last.error.message : String(last.error);
    throw new Error(`waitFor timed out after ${timeoutMs} ms${what}; last error: ${message}`, { cause: last.error });
  }
  throw new Error(`waitFor timed out after ${timeoutMs} ms${what}; last value: ${JSON.stringify(last.value)}`);
}
