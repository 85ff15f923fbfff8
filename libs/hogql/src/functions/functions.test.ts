import { QueryParams } from '@sightline/properties';
import { FUNCTION_SAMPLES } from '@sightline/testkit';
import { createHogQLCompiler, HogQLError, type HogQLCompiler, type HogQLContext } from '../hogql-compiler';
import { checkCall, findFunction, findHogQLAggregation, findHogQLFunction, HOGQL_AGGREGATIONS, HOGQL_FUNCTIONS, MAX_VARIADIC_ARGUMENTS } from './index';

const fields = {
  event: 'e.event',
  timestamp: 'e.timestamp',
  distinct_id: 'e.distinct_id',
  person_id: 'e.person_id',
  elements_chain: 'e.elements_chain',
  properties: 'e.properties',
  person_properties: 'e.person_properties',
  group_properties: (i: number) => `e.group${i}_properties`,
};
const constant = (value: unknown) => ({ node: 'Constant', value });

describe('HogQL function allow-list', () => {
  let compiler: HogQLCompiler;
  beforeAll(async () => {
    compiler = await createHogQLCompiler();
  });
  afterAll(() => compiler.close());

  const compile = async (text: string, allowAggregations = true) => {
    const params = new QueryParams();
    const ctx: HogQLContext = { params, fields, allowAggregations };
    return { sql: compiler.print(await compiler.parse(text), ctx), params: params.values };
  };
  const refusal = (text: string, allowAggregations = true) =>
    compile(text, allowAggregations).then(
      () => 'accepted',
      (error: unknown) => (error instanceof HogQLError ? error.message : `not a HogQLError: ${String(error)}`),
    );

  // posthog/hogql/functions/test/test_mapping.py: test_find_case_sensitive_function,
  // test_find_case_insensitive_function, test_find_non_existent_function.
  it('finds names as written, and in any case only those PostHog marks case-insensitive', () => {
    expect(findHogQLFunction('toString')?.spec.clickhouse).toBe('toString');
    expect(findHogQLFunction('TOString')).toBeUndefined();
    expect(findHogQLFunction('PlUs')).toBeUndefined();
    expect(findHogQLAggregation('countIf')?.spec.clickhouse).toBe('countIf');
    expect(findHogQLAggregation('COUNTIF')).toBeUndefined();
    expect(findHogQLFunction('CoAlesce')).toMatchObject({ name: 'coalesce', spec: { clickhouse: 'coalesce' } });
    expect(findHogQLAggregation('SuM')).toMatchObject({ name: 'sum', spec: { clickhouse: 'sum' } });
    expect(findFunction('functionThatDoesntExist')).toBeUndefined();
  });

  // posthog/hogql/test/test_printer.py test_expr_parse_errors.
  it.each([
    ['count(1,2,3,4)', "Aggregation 'count' expects at most 1 argument, found 4"],
    ['countIf()', "Aggregation 'countIf' expects at least 1 argument, found 0"],
    ['countIf(2,3,4)', "Aggregation 'countIf' expects at most 2 arguments, found 3"],
    ['uniq()', "Aggregation 'uniq' expects at least 1 argument, found 0"],
    ['quantile(event)', "Aggregation 'quantile' requires parameters in addition to arguments"],
    ['quantile()(event)', "Aggregation 'quantile' expects 1 parameter, found 0"],
    ['quantile(0.5, 2)(event)', "Aggregation 'quantile' expects 1 parameter, found 2"],
    ['hamburger(event)', "Unsupported function call 'hamburger(...)'"],
    ['mad(event)', "Unsupported function call 'mad(...)'"],
    ['noway(event)', "Unsupported function call 'noway(...)'. Perhaps you meant 'now(...)'?"],
    ['tostring(event)', "Unsupported function call 'tostring(...)'. Perhaps you meant 'toString(...)'?"],
    ['avg(avg(properties.bla))', "Aggregation 'avg' cannot be nested inside another aggregation 'avg'."],
    ['lower(event, event)', "Function 'lower' expects 1 argument, found 2"],
    ['dateDiff(event)', "Function 'dateDiff' expects at least 3 arguments, found 1"],
    ['today(1)', "Function 'today' expects 0 arguments, found 1"],
    ['sum(1)(event)', "Aggregation 'sum' expects 0 parameters, found 1"],
  ])('%s: %s', async (text, message) => {
    expect(await refusal(text)).toBe(message);
  });

  it("answers PostHog's arity messages for every function, with the name as written", () => {
    const args = (n: number) => Array.from({ length: n }, () => constant(1));
    for (const [name, spec] of [...HOGQL_FUNCTIONS, ...HOGQL_AGGREGATIONS]) {
      const found = { name, spec };
      const term = spec.aggregate ? 'Aggregation' : 'Function';
      const params = spec.minParams ? [constant(0.5)] : null;
      const tooMany = spec.maxArgs + 1;
      const expected =
        spec.minArgs === spec.maxArgs
          ? `expects ${spec.minArgs} argument${spec.minArgs === 1 ? '' : 's'}`
          : `expects at most ${spec.maxArgs} argument${spec.maxArgs === 1 ? '' : 's'}`;
      expect(() => checkCall(name, found, args(tooMany), params)).toThrow(new HogQLError(`${term} '${name}' ${expected}, found ${tooMany}`));
      if (spec.minArgs > 0 && spec.minArgs !== spec.maxArgs) {
        expect(() => checkCall(name, found, args(spec.minArgs - 1), params)).toThrow(
          new HogQLError(`${term} '${name}' expects at least ${spec.minArgs} argument${spec.minArgs === 1 ? '' : 's'}, found ${spec.minArgs - 1}`),
        );
      }
      expect(spec.maxArgs).toBeLessThanOrEqual(MAX_VARIADIC_ARGUMENTS);
    }
  });

  // About 800 parses, one after another (each has its deadline): given time on a loaded machine.
  it('checks every sample against its arity through the parser too', async () => {
    for (const [name, sample] of Object.entries(FUNCTION_SAMPLES)) {
      const max = HOGQL_FUNCTIONS.get(name)!.maxArgs;
      if (max >= MAX_VARIADIC_ARGUMENTS) continue;
      const count = ((await compiler.parse(sample))['args'] as unknown[]).length;
      const extra = Array<string>(max + 1 - count).fill('1');
      const grown = count === 0 ? `${name}(${extra.join(', ')})` : `${sample.slice(0, -1)}, ${extra.join(', ')})`;
      expect([name, await refusal(grown, false)]).toEqual([name, expect.stringMatching(new RegExp(`^Function '${name}' expects (at most )?${max} argument`))]);
    }
  }, 120_000);

  // Table functions, functions that read files, URLs or other servers, and the server's own state.
  it.each([
    'file',
    'url',
    'remote',
    'remoteSecure',
    'cluster',
    'clusterAllReplicas',
    's3',
    's3Cluster',
    'hdfs',
    'mysql',
    'postgresql',
    'mongodb',
    'redis',
    'sqlite',
    'jdbc',
    'odbc',
    'executable',
    'input',
    'numbers',
    'numbers_mt',
    'zeros',
    'generateRandom',
    'generate_series',
    'generateSeries',
    'merge',
    'dictionary',
    'dictGet',
    'dictGetString',
    'joinGet',
    'sleep',
    'sleepEachRow',
    'throwIf',
    'getSetting',
    'currentDatabase',
    'currentUser',
    'hostName',
    'version',
    'uptime',
    'hasColumnInTable',
    'filesystemAvailable',
    'getMacro',
    'shardNum',
    'globalVariable',
    'runningAccumulate',
    'initializeAggregation',
    'transactionID',
    'timeSlots',
    'multiMatchAny',
    'space',
    'icebergS3',
  ])('refuses %s, naming it', async (name) => {
    expect(findFunction(name)).toBeUndefined();
    expect(await refusal(`${name}('x')`)).toMatch(new RegExp(`^Unsupported function call '${name}\\(\\.\\.\\.\\)'`));
  });

  it('maps no name to a ClickHouse function that reads outside the query', () => {
    const outside =
      /^(file|url|remote\w*|cluster\w*|s3\w*|hdfs|mysql|postgresql|mongodb|redis|sqlite|jdbc|odbc|executable|input|dict\w*|joinGet\w*|sleep\w*|throwIf|getSetting|currentDatabase|hostName|version)$/;
    expect([...HOGQL_FUNCTIONS, ...HOGQL_AGGREGATIONS].filter(([, spec]) => outside.test(spec.clickhouse)).map(([name]) => name)).toEqual([]);
  });

  // posthog/hogql/test/test_printer.py test_functions (numbers are bound here, not inlined).
  it("prints PostHog's name mapping, parameters and combinators", async () => {
    expect((await compile('abs(1)')).sql).toBe('abs({p0:UInt8})');
    expect((await compile('max2(1,2)')).sql).toBe('max2({p0:UInt8}, {p1:UInt8})');
    expect((await compile('quantile(0.95)( event )')).sql).toBe('quantile(0.95)(e.event)');
    expect((await compile('groupArraySample(5)(event)')).sql).toBe('groupArraySample(5)(e.event)');
    expect((await compile('groupArraySample(5, 123456)(event)')).sql).toBe('groupArraySample(5, 123456)(e.event)');
    expect((await compile('groupArraySampleIf(5)(event, event is not null)')).sql).toBe('groupArraySampleIf(5)(e.event, (e.event != NULL))');
    expect((await compile("trim('  a ')")).sql).toBe('trimBoth({p0:String})');
    expect((await compile('sumArrayIf([1], 1)')).sql).toBe('sumArrayIf([{p0:Int64}], {p1:UInt8})');
    expect((await compile('avgArgMax(1, timestamp)')).sql).toBe('avgArgMax({p0:Int64}, e.timestamp)');
    expect((await compile('countIf(distinct event, 1 == 2)')).sql).toBe('countIf(DISTINCT e.event, ({p0:Int64} = {p1:Int64}))');
    expect((await compile('sum(distinct properties.price)')).sql).toMatch(
      /^sum\(DISTINCT if\(\(JSONExtract\(e\.properties, \{p0:String\}, 'Nullable\(Float64\)'\)/,
    );
    expect(await refusal('lower(distinct event)')).toBe("DISTINCT is only allowed in an aggregation, not in 'lower'.");
  });

  // posthog/hogql/test/test_printer.py test_case_when, test_case_when_many, test_case_when_case.
  it('prints CASE as if, multiIf, and CASE x WHEN as multiIf over equalities', async () => {
    expect((await compile('case when 1 then 2 else 3 end')).sql).toBe('if({p0:Int64}, {p1:Int64}, {p2:Int64})'.replace(/Int64/g, 'UInt8'));
    expect((await compile('case when 1 then 2 when 3 then 4 else 5 end')).sql).toBe('multiIf({p0:UInt8}, {p1:UInt8}, {p2:UInt8}, {p3:UInt8}, {p4:UInt8})');
    expect((await compile('case 0 when 1 then 2 when 3 then 4 else 5 end')).sql).toBe(
      'multiIf(({p0:Int64}) = ({p2:Int64}), {p3:Int64}, ({p0:Int64}) = ({p4:Int64}), {p5:Int64}, {p1:Int64})',
    );
  });

  it('types integer constants given to a function as ClickHouse types their literals', async () => {
    expect(await compile('toStartOfWeek(timestamp, 1)')).toEqual({ sql: 'toStartOfWeek(e.timestamp, {p0:UInt8})', params: { p0: 1 } });
    expect(await compile('substring(event, 300, -2)')).toEqual({ sql: 'substring(e.event, {p0:UInt16}, {p1:Int8})', params: { p0: 300, p1: -2 } });
    expect((await compile('plus(70000, 5000000000)')).sql).toBe('plus({p0:UInt32}, {p1:UInt64})');
    // Outside a call, a number stays Int64 (ClickHouse's arithmetic on the digits the client wrote).
    expect((await compile('1 + 2')).sql).toBe('({p0:Int64} + {p1:Int64})');
  });

  it('takes lambdas in the higher-order functions only, printing generated names', async () => {
    expect(await compile('arrayMap(x -> x * 2, [1, 2])')).toEqual({
      sql: 'arrayMap((__lambda_0) -> (__lambda_0 * {p0:Int64}), [{p1:Int64}, {p2:Int64}])',
      params: { p0: 2, p1: 1, p2: 2 },
    });
    expect((await compile('arrayFilter((event, i) -> event > i, [3], [1])')).sql).toBe(
      'arrayFilter((__lambda_0, __lambda_1) -> (__lambda_0 > __lambda_1), [{p0:Int64}], [{p1:Int64}])',
    );
    const quoted = await compile("arrayMap(`x') FROM system.tables --` -> 1, [1])");
    expect(quoted.sql).toBe('arrayMap((__lambda_0) -> {p0:Int64}, [{p1:Int64}])');
    expect((await compile('arrayMap(x -> arrayMap(y -> x + y, [1]), [2])')).sql).toBe(
      'arrayMap((__lambda_0) -> arrayMap((__lambda_1) -> (__lambda_0 + __lambda_1), [{p0:Int64}]), [{p1:Int64}])',
    );
    expect(await refusal('lower(x -> x)')).toBe("Function 'lower' takes no lambda.");
    expect(await refusal('arrayMap((x, x) -> x, [1])')).toBe('The names of a lambda must differ.');
    // A lambda's name is not a field outside it.
    expect(await refusal('arrayMap(x -> x, [1]) + x')).toMatch(/^Field "x" is not allowed/);
  });

  it('bounds what a function could build without end', async () => {
    expect((await compile('range(10)')).sql).toBe('range({p0:UInt8})');
    expect((await compile('range(0, 20000, 2)')).sql).toBe('range({p0:UInt8}, {p1:UInt16}, {p2:UInt8})');
    expect(await refusal('range(10001)')).toBe("Function 'range' builds at most 10000 elements.");
    expect(await refusal('range(0, 10, 0)')).toBe("Function 'range' builds at most 10000 elements.");
    expect(await refusal('range(toInt(event))')).toBe("Function 'range' takes constant integers.");
    expect(await refusal('arrayResize([1], 100000)')).toBe("Function 'arrayResize' takes its size as a constant integer from -10000 to 10000.");
    expect(await refusal('arrayWithConstant(toInt(event), 1)')).toBe("Function 'arrayWithConstant' takes its size as a constant integer from 0 to 10000.");
    expect(await refusal("repeat('a', 1001)")).toBe("Function 'repeat' takes its size as a constant integer from 0 to 1000.");
    expect(await refusal('leftPad(event, 1000000)')).toBe("Function 'leftPad' takes its size as a constant integer from 0 to 10000.");
    expect((await compile('groupArray(event)')).sql).toBe('groupArray(10000)(e.event)');
    expect((await compile('groupUniqArray(5)(event)')).sql).toBe('groupUniqArray(5)(e.event)');
    expect(await refusal('groupArray(20000)(event)')).toBe(
      "Aggregation 'groupArray' keeps at most 10000 elements: its first parameter must be an integer from 1 to 10000.",
    );
    expect(await refusal('topK(1000000)(event)')).toMatch(/^Aggregation 'topK' keeps at most 10000 elements/);
    expect((await compile("arrayReduce('max', [1])")).sql).toBe('arrayReduce({p0:String}, [{p1:Int64}])');
    expect(await refusal("arrayReduce('groupArray', [1])")).toMatch(/^Function 'arrayReduce' takes the name of one of these aggregates first: count, /);
    expect(await refusal('quantile(2)(event)')).toBe('quantile needs levels between 0 and 1, as in quantile(0.9)(x).');
    expect(await refusal("quantile('0.5')(event)")).toBe('quantile needs levels between 0 and 1, as in quantile(0.9)(x).');
    expect(await refusal("topK('5')(event)")).toMatch(/^Aggregation 'topK' keeps at most/);
  });

  // Found by hostile-argument runs (libs/insights/src/common/hogql-function-errors.slow.test.ts):
  // each failed the whole query with an error ClickHouse does not class as the input's.
  it('refuses before ClickHouse what would fail the whole query, or reads it without failing', async () => {
    expect(await refusal("JSONExtract('{}', 'a', 'zz')")).toBe(
      "JSONExtract needs a ClickHouse data type as a constant last argument, as in JSONExtract(json, 'key', 'Array(String)').",
    );
    expect(await refusal("JSONExtract('{}', 'a', '')")).toMatch(/^JSONExtract needs a ClickHouse data type/);
    expect(await refusal("JSONExtractKeysAndValues('{}', event)")).toMatch(/^JSONExtractKeysAndValues needs a ClickHouse data type/);
    expect((await compile("JSONExtract('{}', 'a', 'Array(Tuple(Nullable(String), Int64))')")).sql).toMatch(/^JSONExtract\(/);
    expect(await refusal('format(1, event)')).toBe("Function 'format' takes a constant string as argument 1.");
    expect(await refusal('leftPad(event, -1)')).toBe("Function 'leftPad' takes its size as a constant integer from 0 to 10000.");
    expect((await compile("base64Decode('zz')")).sql).toBe('tryBase64Decode({p0:String})');
    expect((await compile('base58Decode(event)')).sql).toBe('tryBase58Decode(e.event)');
    for (const name of ['convertCharset', 'untuple', 'bitTest', 'regexpExtract']) expect(findFunction(name)).toBeUndefined();
  });

  it('checks constant patterns and time zones wherever a function takes them', async () => {
    expect(await refusal("replaceRegexpAll(event, '(', 'x')")).toBe('replaceRegexpAll needs a valid regular expression constant (RE2 syntax).');
    expect(await refusal("splitByRegexp(event, 'a')")).toBe('splitByRegexp needs a valid regular expression constant (RE2 syntax).');
    expect(await refusal('extractAll(event, event)')).toBe('extractAll needs a valid regular expression constant (RE2 syntax).');
    expect(await refusal("toTimeZone(timestamp, 'Mars/Olympus')")).toBe('Unknown time zone "Mars/Olympus" in toTimeZone().');
    expect(await refusal("formatDateTime(timestamp, '%Y', 'Nowhere')")).toBe('Unknown time zone "Nowhere" in formatDateTime().');
    expect(await refusal("now('Nowhere')")).toBe('Unknown time zone "Nowhere" in now().');
  });

  it('reads agg(x) FILTER (WHERE c) as aggIf(x, c)', async () => {
    expect((await compile("count() filter (where event = 'a')")).sql).toBe('countIf((e.event = {p0:String}))');
    expect(await refusal("argMinIf(event, timestamp, 1) filter (where event = 'a')")).toMatch(
      /^FILTER \(WHERE …\) is only allowed after an aggregation with an -If form/,
    );
  });

  it('reads count(*) as count(), and refuses ORDER BY and WITHIN GROUP inside a call', async () => {
    expect((await compile('count(*)')).sql).toBe('count()');
    expect((await compile('COUNT(*)')).sql).toBe('count()');
    expect(await refusal('sum(*)')).toMatch(/^Field "\*" is not allowed/);
    expect(await refusal('groupArray(event ORDER BY timestamp)')).toBe("ORDER BY inside 'groupArray(...)' is not supported.");
    expect(await refusal('percentile_cont(0.5) WITHIN GROUP (ORDER BY event)')).toBe("WITHIN GROUP after 'percentile_cont(...)' is not supported.");
  });

  // posthog/hogql/functions/test/test_mapping.py test_generated_aggregate_combinator_functions_snapshot:
  // -If, -ArgMin and -ArgMax take one more argument; -State, -Merge and -Map are left out here.
  it('generates the combinator forms PostHog generates, with their argument counts', () => {
    const bounds = (name: string) => {
      const spec = HOGQL_AGGREGATIONS.get(name);
      return spec && [spec.minArgs, spec.maxArgs];
    };
    expect(bounds('avgIf')).toEqual([2, 2]);
    expect(bounds('sumArrayOrNullIf')).toEqual([2, 2]);
    expect(bounds('countArgMaxIf')).toEqual([2, 3]);
    expect(bounds('maxArgMinOrDefault')).toEqual([2, 2]);
    expect(bounds('medianForEachIf')).toEqual([2, 2]);
    expect(bounds('countDistinctOrNull')).toEqual([1, 1]);
    for (const absent of ['sumIfArray', 'sumState', 'sumMerge', 'sumMap', 'avgArgMaxArgMin', 'countOrNullOrDefault']) expect(bounds(absent)).toBeUndefined();
  });

  it('keeps aggregates out of per-event expressions', async () => {
    expect(await refusal('sumIf(1, 1)', false)).toBe('Aggregate function "sumIf" is not allowed here: this expression is evaluated per event.');
    expect(await refusal('avgArray([1])', false)).toBe('Aggregate function "avgArray" is not allowed here: this expression is evaluated per event.');
  });
});
