/**
 * The HogQL fuzz run shared by the integration tier (a bounded run) and the slow tier (a long
 * one): generated expressions (testkit's hogqlExpression) through the three places a trend takes
 * HogQL, on a running server over both ClickHouse clients the service uses (the HTTP interface
 * and the in-process engine of `npm start`). Whatever the expression, the answer is a 200 or a
 * 4xx in the DRF envelope (an `invalid_hogql` one quoting the expression), never a 5xx.
 */
import fc from 'fast-check';
import { insertEvents } from '@sightline/clickhouse';
import { createTestPerson, hogqlExpression, testEventRow } from '@sightline/testkit';
import { createFlagFixture, type FlagFixture, serveFixture, type ServedFixture } from './api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');

/** The three places a trend takes HogQL. */
export const HOGQL_ENTRY_POINTS: Record<string, (expression: string) => Record<string, unknown>> = {
  math_hogql: (expression) => ({ events: [{ id: 'signup', math: 'hogql', math_hogql: expression }] }),
  breakdown: (expression) => ({ events: [{ id: 'signup' }], breakdown_type: 'hogql', breakdown: expression }),
  properties: (expression) => ({ events: [{ id: 'signup' }], properties: [{ type: 'hogql', key: expression }] }),
};

export function describeHogQLFuzz(runs: number, seed?: number): void {
  describe.each(['pg', 'chdb'] as const)('HogQL fuzz through math_hogql, hogql breakdowns and hogql filters (ClickHouse: %s)', (store) => {
    let fixture: FlagFixture;
    let served: ServedFixture;
    const statuses = new Map<number, number>();

    beforeAll(async () => {
      fixture = await createFlagFixture(`hogqlfuzz${store}`, () => NOW, store);
      served = await serveFixture(fixture);
      const person = await createTestPerson(fixture, { distinctIds: ['u1'], properties: { email: 'a@example.com', x: '5' } });
      const properties = { x: 5, $browser: 'Chrome', 'a key': 'v', $group_0: 'acme' };
      await insertEvents(fixture.ch, [
        testEventRow({ event: 'signup', atMs: NOW - 3_600_000, distinctId: 'u1', personId: person.uuid, properties, personProperties: { x: '5' } }),
        testEventRow({ event: 'signup', atMs: NOW - 86_400_000, distinctId: 'u2', properties: { x: 'not a number', y: null } }),
      ]);
    });
    afterAll(async () => {
      await served?.close();
      await fixture?.close();
    });

    it(`answers ${runs} generated expressions × 3 entry points with no 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(hogqlExpression, async (expression) => {
          for (const [entry, body] of Object.entries(HOGQL_ENTRY_POINTS)) {
            const answer = await served.send('POST', '/api/projects/1/insights/trend/', { date_from: '-7d', refresh: true, ...body(expression) });
            statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
            const what = `${entry} ${JSON.stringify(expression)}: ${answer.status} ${answer.text.slice(0, 300)}`;
            if (answer.status >= 500 || answer.status < 200) throw new Error(what);
            if (answer.status === 200) continue;
            if (answer.status !== 400 || !['attr', 'code', 'detail', 'type'].every((k) => k in answer.json)) throw new Error(what);
            if (answer.json['code'] === 'invalid_hogql' && expression.length <= 120 && !String(answer.json['detail']).includes(JSON.stringify(expression))) {
              throw new Error(`the 400 does not quote the expression: ${what}`);
            }
          }
        }),
        // Two expressions ClickHouse answers go first, so a run always reaches it.
        { numRuns: runs, seed, reporter: shortReport, examples: [["event = 'signup'"], ['count()']] },
      );
      expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    });
  });
}

/** fast-check's default report prints every shrink step: keep the counterexample and the error. */
function shortReport<T>(details: fc.RunDetails<T>): void {
  if (!details.failed) return;
  const example = JSON.stringify(details.counterexample).slice(0, 500);
  throw new Error(`failed after ${details.numRuns} runs (seed ${details.seed}) on ${example}: ${String(details.errorInstance).slice(0, 1_000)}`);
}
