import { QueryFilterError } from '../common/query-filter-error';
import { parseRetentionFilter, retentionQueryToFilter } from './retention-filter';

const refused = (input: Record<string, unknown>) => {
  try {
    parseRetentionFilter(input);
  } catch (error) {
    if (error instanceof QueryFilterError) return { attr: error.attr, code: error.code };
    throw error;
  }
  return null;
};

describe('retention filter', () => {
  it("reads PostHog's defaults: $pageview both ways, recurring, Day, 11 intervals", () => {
    const filter = parseRetentionFilter({});
    expect(filter).toMatchObject({
      target: { kind: 'events', id: '$pageview' },
      returning: { kind: 'events', id: '$pageview' },
      retentionType: 'retention_recurring',
      period: 'Day',
      totalIntervals: 11,
      minimumOccurrences: 1,
      cumulative: false,
      breakdown_limit: 25,
    });
  });

  it('reads a RetentionQuery node and the legacy GET form alike', () => {
    const node = retentionQueryToFilter({
      kind: 'RetentionQuery',
      dateRange: { date_to: '2020-06-20' },
      retentionFilter: { targetEntity: { id: 3, type: 'actions' }, returningEntity: { id: null }, period: 'Week', totalIntervals: 4, cumulative: true },
      breakdownFilter: { breakdowns: [{ property: 'country', type: 'person' }] },
    });
    const fromNode = parseRetentionFilter(node);
    const fromQueryString = parseRetentionFilter({
      date_to: '2020-06-20',
      target_entity: '{"id": 3, "type": "actions"}',
      returning_entity: '{"id": null}',
      period: 'Week',
      total_intervals: '4',
      cumulative: 'true',
      breakdowns: [{ property: 'country', type: 'person' }],
    });
    expect(fromNode).toEqual(fromQueryString);
    expect(fromNode.target).toMatchObject({ kind: 'actions', id: 3 });
    expect(fromNode.returning).toMatchObject({ kind: 'events', id: null, name: 'All events' });
  });

  it('refuses what it cannot compute with a 400 naming the field', () => {
    expect(refused({ period: 'Fortnight' })).toEqual({ attr: 'period', code: 'invalid_choice' });
    expect(refused({ retention_type: 'retention_first_ever_occurrence' })).toEqual({ attr: 'retention_type', code: 'not_supported' });
    expect(refused({ total_intervals: 0 })).toEqual({ attr: 'total_intervals', code: 'min_value' });
    expect(refused({ total_intervals: 1001 })).toEqual({ attr: 'total_intervals', code: 'max_value' });
    expect(refused({ target_entity: { type: 'actions' } })).toEqual({ attr: 'target_entity__id', code: 'invalid' });
    expect(refused({ returning_entity: '{"id": ' })).toEqual({ attr: 'returning_entity', code: 'parse_error' });
    expect(refused({ breakdowns: [{ property: 'a' }, { property: 'b' }] })).toEqual({ attr: 'breakdowns', code: 'max_length' });
    expect(refused({ breakdown: 'x', breakdown_type: 'hogql' })).toEqual({ attr: 'breakdown_type', code: 'not_supported' });
    // An entity sent as JSON text (the GET form) is checked as a body is: depth, NULs.
    const deep = `{"id": "a", "properties": ${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    expect(refused({ target_entity: deep })?.attr).toMatch(/^target_entity/);
    expect(refused({ target_entity: '{"id": "a\\u0000"}' })?.code).toBe('null_characters_not_allowed');
  });

  it('reads an event_metadata breakdown from the event, as PostHog retention does', () => {
    expect(parseRetentionFilter({ breakdowns: [{ property: '$group_0', type: 'event_metadata' }] }).breakdowns[0]).toMatchObject({
      type: 'event',
      property: '$group_0',
    });
  });
});
