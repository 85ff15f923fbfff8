/** What the gateway knows about a project API key. */
export type KeyResolution = { status: 'known'; teamId: number } | { status: 'unknown' } | { status: 'unavailable' };

export interface ProjectKeyResolver {
  resolve(token: string): Promise<KeyResolution>;
}

/**
 * Caches key lookups: known keys for minutes (keys rarely change), unknown ones for a few
 * seconds (so a project created a moment ago works at once). When the store cannot be
 * reached the answer is "unavailable" and the gateway fails open.
 */
export function createProjectKeyResolver(
  lookup: (token: string) => Promise<number | null>,
  options: { positiveTtlMs?: number; negativeTtlMs?: number; maxEntries?: number; now?: () => number } = {},
): ProjectKeyResolver {
  const positiveTtl = options.positiveTtlMs ?? 5 * 60_000;
  const negativeTtl = options.negativeTtlMs ?? 10_000;
  const maxEntries = options.maxEntries ?? 100_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, { teamId: number | null; expires: number }>();
  const inflight = new Map<string, Promise<KeyResolution>>();

  return {
    async resolve(token) {
      const hit = cache.get(token);
      if (hit && hit.expires > now()) return hit.teamId === null ? { status: 'unknown' } : { status: 'known', teamId: hit.teamId };
      let pending = inflight.get(token);
      if (!pending) {
        pending = lookup(token)
          .then((teamId): KeyResolution => {
            if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
            cache.set(token, { teamId, expires: now() + (teamId === null ? negativeTtl : positiveTtl) });
            return teamId === null ? { status: 'unknown' } : { status: 'known', teamId };
          })
          .catch((): KeyResolution => ({ status: 'unavailable' }))
          .finally(() => inflight.delete(token));
        inflight.set(token, pending);
      }
      return pending;
    },
  };
}
