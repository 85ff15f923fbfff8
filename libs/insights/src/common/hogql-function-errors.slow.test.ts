import { createAnalyticsStore, queryClickhouse, type ClickHouseClient } from '@sightline/clickhouse';
import { createHogQLCompiler, HOGQL_AGGREGATIONS, HogQLError, type HogQLCompiler, type HogQLNode } from '@sightline/hogql';
import { QueryParams } from '@sightline/properties';
import {
  AGGREGATE_SAMPLES,
  createTestClickHouseDatabase,
  FUNCTION_SAMPLES,
  SAMPLE_EVENT_FIELDS,
  SAMPLE_EVENTS_SQL,
  type TestClickHouseDatabase,
} from '@sightline/testkit';
import { clickHouseInputError } from './clickhouse-input-errors';

/** Values that break functions: empty and odd text, edges of the integer types, null, an empty array, a property (text). */
const ALL_HOSTILE = ["''", "'zz'", "'\\0'", '-1', '0', '300', '1e308', '-9223372036854775808', 'NULL', '[]', 'properties.price'];
/**
 * The values that found most server errors when the sweep was written (odd and empty text, a
 * negative integer, an empty array): every function with each of them takes about half a
 * minute, which npm test can afford; HOGQL_FUNCTION_ERRORS_ALL=1 sweeps all of them.
 */
const HOSTILE = process.env['HOGQL_FUNCTION_ERRORS_ALL'] === '1' ? ALL_HOSTILE : ["''", "'zz'", '-1', '[]'];

/**
 * Every allowed function with each of its arguments replaced by a hostile value, run on the
 * ClickHouse engine: the printer refuses it (a HogQLError, a 400), or ClickHouse answers, or
 * ClickHouse fails with an error the client's input causes (clickhouse-input-errors.ts, a 400).
 * Any other failure would reach a client as a 500; those found this way were taken out of the
 * allow-list or checked before printing.
 */
describe('hostile arguments to every HogQL function', () => {
  let database: TestClickHouseDatabase;
  let ch: ClickHouseClient;
  let compiler: HogQLCompiler;
  beforeAll(async () => {
    database = await createTestClickHouseDatabase('hogql_function_errors');
    ch = createAnalyticsStore({ url: database.url, user: 'default', password: '', database: database.database });
    compiler = await createHogQLCompiler();
  });
  afterAll(async () => {
    await compiler.close();
    await ch.close();
    await database.drop();
  });

  it.each(Object.entries({ ...FUNCTION_SAMPLES, ...AGGREGATE_SAMPLES }))('%s: a 400 or an answer, whatever its arguments', async (name, sample) => {
    const call = await compiler.parse(sample);
    const args = (call['args'] as HogQLNode[] | null) ?? [];
    const failures: string[] = [];
    for (let i = 0; i < args.length; i++) {
      for (const hostile of HOSTILE) {
        const node = { ...call, args: args.map(async (arg, j) => (j === i ? compiler.parse(hostile) : arg)) };
        const mutated = { ...node, args: await Promise.all(node.args) };
        const params = new QueryParams();
        let sql: string;
        try {
          sql = compiler.print(mutated, { params, fields: SAMPLE_EVENT_FIELDS, allowAggregations: HOGQL_AGGREGATIONS.has(name) });
        } catch (error) {
          if (error instanceof HogQLError) continue;
          throw error;
        }
        try {
          await queryClickhouse(ch, {
            kind: 'test.hogql_function_errors',
            teamId: null,
            sql: `SELECT ${sql} AS value FROM ${SAMPLE_EVENTS_SQL}`,
            params: params.values,
          });
        } catch (error) {
          if (clickHouseInputError(error) === null) failures.push(`argument ${i + 1} = ${hostile}: ${String(error).slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});
