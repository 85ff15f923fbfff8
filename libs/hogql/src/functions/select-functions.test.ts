import { createHogQLCompiler, HogQLError, type HogQLCompiler } from '../hogql-compiler';
import { compileSelect } from '../select';

/** The SELECT compiler (HogQLQuery) prints calls through the same allow-list as expressions. */
describe('HogQL functions in a SELECT', () => {
  let compiler: HogQLCompiler;
  beforeAll(async () => {
    compiler = await createHogQLCompiler();
  });
  afterAll(() => compiler.close());

  const compile = async (text: string) =>
    compileSelect(await compiler.parseSelect(text), { teamId: 7, text, values: {}, limits: { default: 100, max: 50_000 } });
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
});
