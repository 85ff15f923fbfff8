/**
 * `promise`'s outcome if it settles within `ms`, else a rejection with `onTimeout()`'s error.
 * The promise itself is not cancelled (nothing in Node can cancel a promise): callers that must
 * not act later on a late answer say so themselves. The timer is cleared either way, so a
 * settled call keeps no handle alive.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
