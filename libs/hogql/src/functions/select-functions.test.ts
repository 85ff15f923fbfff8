import { createHogQLCompiler, HogQLError, type HogQLCompiler } from '../hogql-compiler';
import { compileSelect } from '../select';

/** The SELECT compiler (HogQLQuery) prints calls through the same allow-list as expressions. */
describe('HogQL functions in a SELECT', () => {
  let compiler: HogQLCompiler;
  beforeAll(async () => {
    compiler = await createHogQLCompiler();
  });
  afterAll(() => compiler.close());

  const compile = async (text: string, timezone?: string, values: Record<string, string | number> = {}) =>
    compileSelect(await compiler.parseSelect(text), { teamId: 7, text, values, limits: { default: 100, max: 50_000 }, timezone });
  const refusal = (text: string) =>
    compile(text).then(
      () => 'accepted',
      (error: unknown) => (error instanceof HogQLError ? error.message : `not a HogQLError: ${String(error)}`),
    );

  it('prints lambdas, combinators and bounded builders', async () => {
    const { sql } = await compile("SELECT arrayMap(x -> x * 2, range(3)) AS doubled, sumIf(1, event = 'a'), groupArray(event) FROM events");
    expect(sql).toMatch(/arrayMap\(\(__lambda_0\) -> \(__lambda_0 \* \{\w+:Int64\}\), range\(\{\w+:UInt8\}\)\) AS `doubled`/);
    expect(sql).toMatch(/sumIf\(\{\w+:Int64\}, /);
    expect(sql).toContain('groupArray(10000)(');
  });

  it.each([
    ['SELECT hamburger(event) FROM events', "Unsupported function call 'hamburger(...)'"],
    ['SELECT tostring(event) FROM events', "Unsupported function call 'tostring(...)'. Perhaps you meant 'toString(...)'?"],
    ['SELECT lower(event, event) FROM events', "Function 'lower' expects 1 argument, found 2"],
    // The SELECT compiler adds where in the query the refused call starts.
    ['SELECT avg(avg(1)) FROM events', "Aggregation 'avg' cannot be nested inside another aggregation 'avg' at 11"],
    ['SELECT range(1000000)', "Function 'range' builds at most 10000 elements at 7"],
    ['SELECT sleep(3)', "Unsupported function call 'sleep(...)'"],
  ])('%s: %s', async (text, message) => {
    expect(await refusal(text)).toMatch(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  });

  /** The SELECT list of a compiled query, with its bound values written in. */
  const selectList = async (text: string, timezone?: string) => {
    const { sql, params } = await compile(text, timezone);
    const list = sql.slice('SELECT '.length, sql.indexOf('\nFROM'));
    return list.replace(/\{(\w+):\w+\}/g, (_, name: string) => JSON.stringify(params[name]));
  };

  // PostHog's test_printer.py test_print_timezone and test_print_timezone_custom: toDateTime of a
  // date-time converts it in the project's zone; of text, reads it in that zone (here always as a
  // DateTime64(6), the timestamp column's type: see toDateTimeCall).
  it.each([
    ['UTC', 'UTC'],
    ['Europe/Brussels', 'Europe/Brussels'],
  ])('toDateTime reads text and date-times in the project zone (%s), as PostHog prints them', async (timezone, zone) => {
    const list = await selectList(
      "SELECT toDateTime(timestamp) AS b, toDateTime('2020-02-02') AS d, toDateTime('2020-02-02 12:25') AS e FROM events",
      timezone,
    );
    expect(list).toBe(
      `toDateTime(__t0.\`timestamp\`, "${zone}") AS \`b\`, toDateTime64("2020-02-02", 6, "${zone}") AS \`d\`, ` +
        `parseDateTime64BestEffort("2020-02-02 12:25", 6, "${zone}") AS \`e\``,
    );
  });

  // PostHog's test_override_timezone: a zone given wins over the project's.
  it('toDateTime takes the zone it is given over the project zone', async () => {
    expect(await selectList("SELECT toDateTime(timestamp, 'US/Pacific') AS tsz, toDateTime('a b', 'US/Pacific') AS t FROM events", 'Europe/Brussels')).toBe(
      'toDateTime(__t0.`timestamp`, "US/Pacific") AS `tsz`, parseDateTime64BestEffortOrNull("a b", 6, "US/Pacific") AS `t`',
    );
  });

  it('toDateTime reads a property (text) best effort, NULL when it is no date-time, and a number as seconds', async () => {
    expect(await selectList('SELECT toDateTime(properties.at) AS p, toDateTime(1700000000) AS n FROM events')).toBe(
      'parseDateTime64BestEffortOrNull(JSONExtract(__t0.`properties`, "at", \'Nullable(String)\'), 6, "UTC") AS `p`, toDateTime(1700000000, "UTC") AS `n`',
    );
  });

  it('compares the timestamp column with a constant of its own type, DateTime64(6)', async () => {
    const { sql } = await compile("SELECT count() FROM events WHERE timestamp >= toDateTime('2024-01-02 00:00:00') AND timestamp < toDateTime('2024-02-01')");
    expect(sql).toMatch(/`timestamp` >= toDateTime64\(\{\w+:String\}, 6, \{\w+:String\}\)/);
    expect(sql).toMatch(/`timestamp` < toDateTime64\(\{\w+:String\}, 6, \{\w+:String\}\)/);
    expect(sql).not.toMatch(/toDateTime\(/);
  });

  it('toDateTime reads a placeholder bound to text as text, and one bound to a number as seconds', async () => {
    const { sql, params } = await compile('SELECT toDateTime({from}) AS a, toDateTime({n}) AS b', 'UTC', { from: '2024-01-02 00:00:00', n: 1704153600 });
    const list = sql.slice('SELECT '.length, sql.indexOf('\nLIMIT')).replace(/\{(\w+):\w+\}/g, (_, name: string) => JSON.stringify(params[name]));
    expect(list).toBe('parseDateTime64BestEffortOrNull("2024-01-02 00:00:00", 6, "UTC") AS `a`, toDateTime(1704153600, "UTC") AS `b`');
  });
});
