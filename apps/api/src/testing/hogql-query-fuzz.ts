import fc from 'fast-check';
import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { hostileHogQLQuery, testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from './api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');

/**
 * Sends `runs` hostile HogQL queries (testkit's hostileHogQLQuery) to POST /query/ and checks
 * that none is answered with a 5xx, every 400 is DRF-shaped, and the service answers a plain
 * query afterwards. The seed makes a run repeatable.
 */
export function describeHogQLQueryFuzz(name: string, runs: number, seed: number): void {
  describe(name, () => {
    let f: FlagFixture;
    beforeAll(async () => {
      f = await createFlagFixture('hogql-query-fuzz', () => NOW);
      await insertEvents(
        f.ch,
        ['a', 'b'].map((distinctId) => testEventRow({ event: 'visit', atMs: NOW - 1000, distinctId, properties: { $browser: 'Chrome' } })),
      );
    });
    afterAll(() => f.close());

    const send = (query: string, values: Record<string, unknown> = {}) =>
      request(f.app)
        .post('/api/environments/1/query/')
        .set(bearer(ADMIN_KEY))
        .send({ query: { kind: 'HogQLQuery', query, values } });

    it(
      `answers ${runs} hostile queries without a 5xx, and keeps answering`,
      async () => {
        await fc.assert(
          fc.asyncProperty(hostileHogQLQuery, fc.record({ p: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) }), async (query, values) => {
            const res = await send(query, values);
            if (res.status >= 500) throw new Error(`${res.status} for ${JSON.stringify(query.slice(0, 300))}: ${JSON.stringify(res.body).slice(0, 300)}`);
            if (res.status === 400) expect(res.body).toMatchObject({ type: 'validation_error', detail: expect.any(String) });
          }),
          { numRuns: runs, seed },
        );
        expect((await send('SELECT count() FROM events')).body.results).toEqual([[2]]);
      },
      60_000 + runs * 4_000,
    );
  });
}
