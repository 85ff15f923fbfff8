import { errors } from '@sightline/http';
import type { InsightRow } from '@sightline/insights';
import { computeTiles, MAX_COMPUTED_TILES, TILE_CONCURRENCY, tileRefresh } from './dashboard-tiles';

describe('computeTiles', () => {
  it('computes at most MAX_COMPUTED_TILES tiles, TILE_CONCURRENCY at a time', async () => {
    const rows = Array.from({ length: MAX_COMPUTED_TILES + 5 }, (_, i) => ({ id: i + 1 }) as InsightRow);
    let running = 0;
    let most = 0;
    const computed: number[] = [];
    const outcomes = await computeTiles(
      async (_project, row) => {
        running++;
        most = Math.max(most, running);
        // One turn of the event loop: the other workers start theirs meanwhile.
        await new Promise((resolve) => setImmediate(resolve));
        running--;
        computed.push(row.id);
        return { result: [], is_cached: false, last_refresh: null, timezone: 'UTC' };
      },
      { id: 1 } as never,
      rows,
      'compute',
    );
    expect(most).toBe(TILE_CONCURRENCY);
    expect(computed.sort((a, b) => a - b)).toEqual(rows.slice(0, MAX_COMPUTED_TILES).map((r) => r.id));
    expect(outcomes.size).toBe(MAX_COMPUTED_TILES);
  });

  it('keeps a refused query on its tile and lets any other failure through', async () => {
    const refused = await computeTiles(
      async () => {
        throw errors.validation('no such action', 'actions', 'action_does_not_exist');
      },
      { id: 1 } as never,
      [{ id: 7 } as InsightRow],
      'compute',
    );
    expect(refused.get(7)).toEqual({ error: { code: 'action_does_not_exist', detail: 'no such action' } });
    await expect(
      computeTiles(
        async () => {
          throw new Error('connection refused');
        },
        { id: 1 } as never,
        [{ id: 7 } as InsightRow],
        'compute',
      ),
    ).rejects.toThrow('connection refused');
  });
});

describe('tileRefresh', () => {
  it('reads PostHog’s refresh values: force_cache only reads the cache, true and force_blocking recompute, others compute through it', () => {
    expect(tileRefresh('force_cache')).toBe('cache_only');
    for (const value of [true, 'true', '1', 'force_blocking']) expect(tileRefresh(value)).toBe('recompute');
    for (const value of [undefined, '', 'false', 'blocking', 'async', 'lazy_async', ['force_cache']]) expect(tileRefresh(value)).toBe('compute');
  });
});
