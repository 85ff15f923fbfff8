import type { ClickHouseClient } from '@clickhouse/client';
import { parseTrendFilter } from './trend-filter';
import { MAX_TREND_POINTS, runTrendQuery } from './trends.query';
import { type QueryProject } from '../common/query-project';
import { type QueryPorts } from '../common/query-ports';

const NOW = Date.parse('2024-06-01T12:00:00Z');
const project: QueryProject = { id: 1, timezone: 'UTC', weekStartDay: 0, testAccountFilters: { type: 'AND', values: [] } };
const unused = () => {
  throw new Error('not used by these trends');
};
const ports: QueryPorts = {
  actionMatch: unused,
  actionName: unused,
  cohortMembership: unused,
  cohortName: unused,
  hogql: unused,
  earliestEventMs: unused,
};

/** A store that records whether anything was asked of it: a refused trend must ask nothing. */
function recordingStore() {
  const queries: string[] = [];
  const ch = {
    query: async (params: { query: string }) => {
      queries.push(params.query);
      return { json: async () => [], stream: async function* () {} };
    },
  } as unknown as ClickHouseClient;
  return { ch, queries };
}

describe('the points of a trend, bounded before it runs', () => {
  it.each([
    // The probe: minute buckets over 47 hours, a distinct_id breakdown asking 1000 values (250).
    ['the probe', { interval: 'minute', date_from: '-47h', breakdown: 'distinct_id', breakdown_type: 'event', breakdown_limit: 1000 }],
    [
      '50 series of hours over five months, compared',
      { interval: 'hour', date_from: '-150d', compare: true, events: Array.from({ length: 50 }, () => ({ id: 'e' })) },
    ],
    ['a compared breakdown', { interval: 'hour', date_from: '-30d', breakdown: '$browser', breakdown_limit: 200, compare: true }],
  ])('refuses %s with a 400 naming the bound, before any query', async (_name, body) => {
    const { ch, queries } = recordingStore();
    const filter = parseTrendFilter({ events: [{ id: '$pageview' }], ...body });
    const refusal = runTrendQuery(ch, project, filter, NOW, ports);
    await expect(refusal).rejects.toMatchObject({ code: 'max_points' });
    await expect(refusal).rejects.toThrow(new RegExp(`at most ${MAX_TREND_POINTS} are allowed`));
    expect(queries).toEqual([]);
  });

  it('runs the largest trends within the bound', async () => {
    const { ch, queries } = recordingStore();
    // 27 values (25, "other", "none") × 2821 minute buckets: 76,167 points.
    const filter = parseTrendFilter({ events: [{ id: '$pageview' }], interval: 'minute', date_from: '-47h', breakdown: 'distinct_id' });
    const answer = await runTrendQuery(ch, project, filter, NOW, ports);
    expect(queries.length).toBe(1);
    expect(answer.result).toEqual([]);
  });
});
