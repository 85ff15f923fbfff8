import { QueryFilterError } from '../common/query-filter-error';
import { columnName, orderExpression, parseEventsQueryNode } from './events-query-node';

describe('an EventsQuery node, checked', () => {
  it('reads PostHog`s defaults: every column (*), 100 rows from the first, no order asked', () => {
    expect(parseEventsQueryNode({ kind: 'EventsQuery' })).toMatchObject({
      select: ['*'],
      where: [],
      events: [],
      orderBy: null,
      limit: 100,
      offset: 0,
      after: null,
      before: null,
      personId: null,
      filterTestAccounts: false,
    });
  });

  it('cuts the limit to 50,000 and reads a non-positive limit or a negative offset as the default, as PostHog`s paginator does', () => {
    expect(parseEventsQueryNode({ limit: 10_000_000 }).limit).toBe(50_000);
    expect(parseEventsQueryNode({ limit: 0 }).limit).toBe(100);
    expect(parseEventsQueryNode({ limit: -5, offset: -3 })).toMatchObject({ limit: 100, offset: 0 });
    expect(parseEventsQueryNode({ limit: 7, offset: 20 })).toMatchObject({ limit: 7, offset: 20 });
  });

  it('takes event and events together, and personId as a uuid or an integer id', () => {
    expect(parseEventsQueryNode({ event: 'a', events: ['b', 'c'] }).events).toEqual(['a', 'b', 'c']);
    expect(parseEventsQueryNode({ personId: 42 }).personId).toBe('42');
  });

  it('refuses what is not PostHog`s shape with a 400 naming the field', () => {
    const refused = (node: Record<string, unknown>) => {
      try {
        parseEventsQueryNode(node);
      } catch (error) {
        return error instanceof QueryFilterError ? [error.attr, error.code] : error;
      }
      return null;
    };
    expect(refused({ select: 'event' })).toEqual(['select', 'not_a_list']);
    expect(refused({ where: [1] })).toEqual(['where__0', 'invalid']);
    expect(refused({ select: [''] })).toEqual(['select__0', 'invalid']);
    expect(refused({ orderBy: Array.from({ length: 101 }, () => 'event') })).toEqual(['orderBy', 'max_length']);
    expect(refused({ events: 'a' })).toEqual(['events', 'not_a_list']);
    expect(refused({ personId: { id: 1 } })).toEqual(['personId', 'invalid']);
    expect(refused({ source: { kind: 'InsightActorsQuery' } })).toEqual(['source', 'not_supported']);
    expect(refused({ limit: 'many' })).toEqual(['limit', 'invalid']);
    expect(refused({ properties: [{ key: 'x', type: 'nonsense' }] })).toEqual([expect.stringMatching(/^properties/), expect.any(String)]);
  });

  it('reads an orderBy entry`s direction and a column`s name before its comment', () => {
    expect(orderExpression('timestamp DESC')).toEqual({ expression: 'timestamp', direction: 'DESC' });
    expect(orderExpression('count() asc')).toEqual({ expression: 'count()', direction: 'ASC' });
    expect(orderExpression('properties.$browser')).toEqual({ expression: 'properties.$browser', direction: 'ASC' });
    expect(columnName('person_display_name -- Person')).toBe('person_display_name');
  });
});
