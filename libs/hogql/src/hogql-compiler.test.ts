import { QueryParams } from '@sightline/properties';
import { createHogQLCompiler, HogQLError, nestingDepth, type HogQLCompiler, type HogQLContext } from './hogql-compiler';

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

describe('HogQL compiler (PostHog parser in a worker, allow-list printer)', () => {
  let compiler: HogQLCompiler;
  beforeAll(async () => {
    compiler = await createHogQLCompiler();
  });
  afterAll(() => compiler.close());

  const compile = async (text: string, allowAggregations = false) => {
    const params = new QueryParams();
    const ctx: HogQLContext = { params, fields, allowAggregations };
    return { sql: compiler.print(await compiler.parse(text), ctx), params: params.values };
  };

  it('prints fields, properties, comparisons and functions with every value bound', async () => {
    const { sql, params } = await compile(
      "event = 'signup' and lower(properties.$browser) like 'chr%' and person.properties.plan in ('pro', 'team') and properties.price > 10",
    );
    expect(sql).toMatchSnapshot();
    expect(Object.values(params).sort()).toEqual(['$browser', 'chr%', 'plan', 'price', 'pro', 'signup', 'team', 10].sort());
    expect(sql).not.toContain("'signup'");
  });

  it('reads numbers out of properties for arithmetic and numeric comparison', async () => {
    // Extracted as a Float64 in one parse of the JSON (not as text parsed again), its JSON type
    // looked at only where it reads 0 or 1 (true and false are no numbers to toFloat).
    const number =
      "if((JSONExtract(e.properties, {p0:String}, 'Nullable(Float64)') IN (0, 1)) AND (JSONType(e.properties, {p0:String}) = 'Bool'), NULL, JSONExtract(e.properties, {p0:String}, 'Nullable(Float64)'))";
    expect((await compile('properties.price * 2 + 1')).sql).toBe(`((${number} * {p1:Int64}) + {p2:Int64})`);
    expect((await compile('toFloat(properties.price)')).sql).toBe(number);
    expect((await compile('properties.price > 10')).sql).toBe(`(${number} > {p1:Int64})`);
    expect((await compile('toFloat(event)')).sql).toBe('toFloat64OrNull(toString(e.event))');
  });

  it('prints aggregates only where allowed, never nested', async () => {
    expect((await compile('sum(properties.price) / count()', true)).sql).toMatch(
      /^\(sum\(if\(\(JSONExtract\(e\.properties, \{p0:String\}, 'Nullable\(Float64\)'\).*\) \/ count\(\)\)$/,
    );
    expect((await compile('quantile(0.9)(properties.price)', true)).sql).toMatch(/^quantile\(0\.9\)\(/);
    expect((await compile('count(distinct person_id)', true)).sql).toBe('uniqExact(e.person_id)');
    await expect(compile('sum(properties.price)')).rejects.toThrow(/Aggregate function "sum" is not allowed here/);
    await expect(compile('sum(count())', true)).rejects.toThrow(new HogQLError("Aggregation 'count' cannot be nested inside another aggregation 'sum'."));
  });

  // posthog/hogql/test/test_printer.py test_case_insensitive_functions and test_mapping.py
  // test_find_case_insensitive_function / test_find_case_sensitive_function.
  it('reads the functions PostHog marks case-insensitive in any case, and only those', async () => {
    expect((await compile('CoALESce(1)')).sql).toBe('coalesce({p0:UInt8})');
    expect((await compile('SuM(1)', true)).sql).toBe((await compile('sum(1)', true)).sql);
    expect((await compile('sum(1)', true)).sql).toMatch(/^sum\(/);
    expect((await compile("IF(event = 'a', 1, 2)")).sql).toBe((await compile("if(event = 'a', 1, 2)")).sql);
    expect((await compile('ISNULL(event)')).sql).toBe('isNull(e.event)');
    expect((await compile('Length(event)')).sql).toBe('length(e.event)');
    expect((await compile('COUNT()', true)).sql).toBe('count()');
    await expect(compile('tostring(event)')).rejects.toThrow(new HogQLError("Unsupported function call 'tostring(...)'. Perhaps you meant 'toString(...)'?"));
    await expect(compile('COUNTIF(1)', true)).rejects.toThrow(new HogQLError("Unsupported function call 'COUNTIF(...)'. Perhaps you meant 'countIf(...)'?"));
  });

  it.each([
    ['sleep', 'sleep(3)', /^Unsupported function call 'sleep\(\.\.\.\)'/],
    ['url', "url('http://evil.test/')", /^Unsupported function call 'url\(\.\.\.\)'/],
    ['file', "file('/etc/passwd')", /^Unsupported function call 'file\(\.\.\.\)'/],
    ['a system table', 'system.tables.name', /Field "system.tables.name" is not allowed/],
    ['a lambda', 'x -> x', /"Lambda" is not allowed/],
    ['a placeholder', 'event = {x}', /"Placeholder" is not allowed/],
    ['a broken quote', "event = 'x') OR 1=1 --", /Syntax error/],
    ['a SELECT', 'select 1', /Syntax error/],
    ['a bad regex', "properties.a =~ '('", /Invalid regular expression/],
    ['nothing', '', /empty/],
    ['1,001 characters', 'a'.repeat(1001), /at most 1000 characters/],
    ['deep nesting', 'f('.repeat(7) + '1' + ')'.repeat(7), /at most 6 deep/],
  ])('refuses %s', async (_case, text, message) => {
    await expect(compile(text, true)).rejects.toThrow(HogQLError);
    await expect(compile(text, true)).rejects.toThrow(message);
  });

  it.each(['constructor', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf', 'toLocaleString', 'propertyIsEnumerable', '__defineGetter__'])(
    'looks functions up by name only: %s(event), a name every JavaScript object has, is unknown',
    async (name) => {
      await expect(compile(`${name}(event)`, true)).rejects.toThrow(`Unsupported function call '${name}(...)'`);
    },
  );

  it('prints toString as ClickHouse toString, also inside like', async () => {
    expect((await compile('toString(event)')).sql).toBe('toString(e.event)');
    const { sql, params } = await compile("toString(timestamp) like '%'");
    expect(sql).toBe('like(toString(toString(e.timestamp)), {p0:String})');
    expect(params).toEqual({ p0: '%' });
  });

  it('keeps every digit of integers past 2^53, typed as ClickHouse types such literals', async () => {
    expect(await compile('9223372036854775807 + 1')).toEqual({ sql: '({p0:Int64} + {p1:Int64})', params: { p0: '9223372036854775807', p1: 1 } });
    expect(await compile('-9223372036854775808 % -1')).toEqual({ sql: '({p0:Int64} % {p1:Int64})', params: { p0: '-9223372036854775808', p1: -1 } });
    expect(await compile('substring(event, -9223372036854775807)')).toEqual({
      sql: 'substring(e.event, {p0:Int64})',
      params: { p0: '-9223372036854775807' },
    });
    expect(await compile('18446744073709551615')).toEqual({ sql: '{p0:UInt64}', params: { p0: '18446744073709551615' } });
    // Past UInt64 the parser writes the digits as text; ClickHouse would read a Float64.
    expect(await compile('99999999999999999999')).toEqual({ sql: '{p0:Float64}', params: { p0: '100000000000000000000' } });
    expect(await compile('0.1 + 9007199254740993')).toEqual({ sql: '({p0:Float64} + {p1:Int64})', params: { p0: 0.1, p1: '9007199254740993' } });
    await expect(compile('1e400')).rejects.toThrow(new HogQLError('Numbers in HogQL expressions must be finite.'));
  });

  it('checks a constant time zone argument against the zones ClickHouse knows', async () => {
    expect((await compile("toDateTime(timestamp, 'Europe/Berlin')")).sql).toBe('toDateTime(e.timestamp, {p0:String})');
    for (const [text, zone, fn] of [
      ["toDateTime(timestamp, 'Invalid/Zone')", 'Invalid/Zone', 'toDateTime'],
      ["toStartOfDay(timestamp, 'US/Pacific-New')", 'US/Pacific-New', 'toStartOfDay'],
      ["toStartOfWeek(timestamp, 1, 'SystemV/AST4')", 'SystemV/AST4', 'toStartOfWeek'],
      ["dateDiff('day', timestamp, now(), 'Canada/East-Saskatchewan')", 'Canada/East-Saskatchewan', 'dateDiff'],
    ]) {
      await expect(compile(text!)).rejects.toThrow(new HogQLError(`Unknown time zone "${zone}" in ${fn}().`));
    }
  });

  it('keeps a quote-breaking string a bound value', async () => {
    const { sql, params } = await compile("event = 'x'' OR 1=1 --'");
    expect(sql).toBe('(e.event = {p0:String})');
    expect(params).toEqual({ p0: "x' OR 1=1 --" });
  });

  it('survives what overflows the parser: the long chain fails alone and the next parse works', async () => {
    // 490 additions overflow the parser's WebAssembly stack.
    await expect(compile(Array(490).fill('1').join('+'))).rejects.toThrow(/cannot be parsed/);
    expect((await compile("event = 'ok'")).sql).toBe('(e.event = {p0:String})');
    expect((await compile('properties.a = 1 and properties.b = 2')).sql).toContain('AND');
  });

  it('gives up on a parse past its deadline and keeps working', async () => {
    const slow = await createHogQLCompiler({ deadlineMs: 50 });
    try {
      const calls = Array(60)
        .fill('f(f(f(f(1))))')
        .join('+')
        .slice(0, 1000)
        .replace(/\+[^+]*$/, '');
      await expect(slow.parse(calls)).rejects.toThrow(/took longer than 50 ms/);
      expect(slow.print(await slow.parse('event'), { params: new QueryParams(), fields, allowAggregations: false })).toBe('e.event');
    } finally {
      await slow.close();
    }
  });

  it('parses a text once: the same text again answers the kept tree, frozen so no compile can change it', async () => {
    const query = "SELECT event, count() FROM events WHERE properties.$browser = 'Chrome' GROUP BY event";
    const first = await compiler.parseSelect(query);
    expect(await compiler.parseSelect(query)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen((first['select'] as object[])[0])).toBe(true);
    // An expression of the same text is another parse; a failed parse is not kept.
    expect(await compiler.parse('event')).not.toBe(await compiler.parseSelect('SELECT event'));
    await expect(compiler.parseSelect('SELECT FROM WHERE')).rejects.toThrow(HogQLError);
    await expect(compiler.parseSelect('SELECT FROM WHERE')).rejects.toThrow(/Syntax error in HogQL query/);
    // A kept tree prints as a fresh one does.
    const expression = "lower(properties.$browser) = 'chrome'";
    expect((await compile(expression)).sql).toBe((await compile(expression)).sql);
  });

  it('measures nesting outside string literals', () => {
    expect(nestingDepth("f(g(1), '(((')")).toBe(2);
    expect(nestingDepth('[[1]]')).toBe(2);
  });
});
