import { HogQLError } from '@sightline/hogql';
import { DateRangeError } from '../common/date-range';
import { QueryInputError } from '../common/events-sql';
import { checkProjectSettings, hogqlExpressions, refusedExpression, withInputErrors } from './query-input';

/** A ClickHouse error as the client hands it over: the code is a string. */
const clickHouseError = (code: number, message: string) => Object.assign(new Error(message), { code: String(code), type: 'WHATEVER' });
const failing = (error: unknown) => () => Promise.reject(error);
const none = { type: 'AND' as const, values: [] };

describe('query input errors', () => {
  const math = { text: 'sum(lower(event))', attr: 'math_hogql' };
  const filter = { text: 'event = 1', attr: 'properties' };

  it('names the one expression a ClickHouse input error comes from, and where it is', async () => {
    await expect(withInputErrors({ timezone: 'UTC' }, [math], failing(clickHouseError(43, 'Illegal type String')))).rejects.toEqual(
      new QueryInputError(
        'math_hogql',
        'The HogQL expression "sum(lower(event))" cannot be evaluated on these events: a function is given an argument of a type it does not take (ILLEGAL_TYPE_OF_ARGUMENT).',
        'invalid_hogql',
      ),
    );
    const both = withInputErrors({ timezone: 'UTC' }, [math, filter, math], failing(clickHouseError(386, 'no common type')));
    await expect(both).rejects.toMatchObject({
      attr: 'hogql',
      message: expect.stringMatching(/^One of the HogQL expressions "sum\(lower\(event\)\)", "event = 1" cannot be evaluated .* \(NO_COMMON_TYPE\)\.$/),
    });
  });

  it('leaves the server’s own failures alone: no HogQL in the query, or an error no input causes', async () => {
    const ownError = clickHouseError(43, 'Illegal type');
    await expect(withInputErrors({ timezone: 'UTC' }, [], failing(ownError))).rejects.toBe(ownError);
    const unknownTable = clickHouseError(60, 'Unknown table');
    await expect(withInputErrors({ timezone: 'UTC' }, [math], failing(unknownTable))).rejects.toBe(unknownTable);
  });

  it('answers a project time zone this ClickHouse refuses (an older server than the list) as a 400 naming the setting', async () => {
    const error = clickHouseError(36, 'Cannot load time zone America/Coyhaique: while executing function toDate');
    const answer = withInputErrors({ timezone: 'America/Coyhaique' }, [], failing(error));
    await expect(answer).rejects.toBeInstanceOf(DateRangeError);
    await expect(answer).rejects.toMatchObject({ attr: 'timezone', message: expect.stringContaining('"America/Coyhaique" is not one ClickHouse knows') });
  });

  it('refuses a project setting no query can run with before running it', () => {
    expect(() => checkProjectSettings({ timezone: 'US/Pacific-New' }, false)).toThrow(DateRangeError);
    expect(() => checkProjectSettings({ timezone: 'UTC', testAccountFiltersProblem: 'bad' }, false)).not.toThrow();
    expect(() => checkProjectSettings({ timezone: 'UTC', testAccountFiltersProblem: 'bad' }, true)).toThrow(
      new QueryInputError('test_account_filters', "The project's test-account filters cannot be applied: bad"),
    );
  });

  it('finds every expression with its place, and names it when the compiler refuses it', () => {
    const hogql = (key: string) => ({ type: 'AND' as const, values: [{ key, type: 'hogql' }] });
    const found = hogqlExpressions(
      { series: [{ math: 'hogql', math_hogql: 'count()', properties: hogql('a') }], properties: hogql('b'), breakdowns: [{ type: 'hogql', property: 'c' }] },
      hogql('d'),
      hogql('e'),
    );
    expect(found).toEqual([
      { text: 'count()', attr: 'math_hogql' },
      { text: 'c', attr: 'breakdown' },
      { text: 'b', attr: 'properties' },
      { text: 'a', attr: 'properties' },
      { text: 'e', attr: 'actions' },
      { text: 'd', attr: 'test_account_filters' },
    ]);
    expect(hogqlExpressions({ series: [], properties: none, breakdowns: [] }, none, none)).toEqual([]);
    expect(refusedExpression({ text: 'f(x)', attr: 'breakdown' }, new HogQLError('Function "f" is not allowed.'))).toEqual(
      new QueryInputError('breakdown', 'HogQL expression "f(x)": Function "f" is not allowed.', 'invalid_hogql'),
    );
  });
});
