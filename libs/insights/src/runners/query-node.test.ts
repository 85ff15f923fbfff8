import { parseQueryNode, parseSavedInsightQuery, QUERY_API_KINDS } from './query-node';
import { QUERY_RUNNERS } from './registry';

const trends = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'signup' }] };
const funnels = {
  kind: 'FunnelsQuery',
  series: [
    { kind: 'EventsNode', event: 'a' },
    { kind: 'EventsNode', event: 'b' },
  ],
};

describe('query node dispatch', () => {
  it('runs a node by its kind, the actors kinds bare or as an ActorsQuery source', () => {
    expect(parseQueryNode(trends)?.kind).toBe('TrendsQuery');
    expect(parseQueryNode(funnels)?.kind).toBe('FunnelsQuery');
    const actors = { kind: 'FunnelsActorsQuery', source: funnels, funnelStep: 1 };
    expect(parseQueryNode(actors)?.kind).toBe('FunnelsActorsQuery');
    const wrapped = parseQueryNode({ kind: 'ActorsQuery', source: actors, limit: 5 });
    expect(wrapped?.kind).toBe('FunnelsActorsQuery');
    expect(wrapped?.kind === 'FunnelsActorsQuery' && wrapped.query.page.limit).toBe(5);
  });

  it('runs an InsightActorsQuery by the runner of its source kind, bare or as an ActorsQuery source', () => {
    const cell = { kind: 'InsightActorsQuery', interval: 2, source: { kind: 'RetentionQuery', retentionFilter: { totalIntervals: 7 } } };
    const bare = parseQueryNode(cell);
    expect(bare?.kind).toBe('RetentionActorsQuery');
    const wrapped = parseQueryNode({ kind: 'ActorsQuery', source: cell, limit: 5 });
    expect(wrapped?.kind === 'RetentionActorsQuery' && [wrapped.query.request.interval, wrapped.query.request.limit]).toEqual([2, 5]);
    expect(parseQueryNode({ kind: 'InsightActorsQuery', interval: 0, source: { kind: 'WebOverviewQuery' } })).toBeNull();
    const edge = { kind: 'InsightActorsQuery', source: { kind: 'PathsQuery', pathsFilter: { pathEndKey: '2_/about' } } };
    expect(parseQueryNode({ kind: 'ActorsQuery', source: edge })?.kind).toBe('PathsActorsQuery');
  });

  it('takes no kind the query API does not run, nor an ActorsQuery around a non-actors kind', () => {
    expect(parseQueryNode({ kind: 'SessionsTimelineQuery' })).toBeNull();
    expect(parseQueryNode({ kind: 'ActorsQuery', source: trends })).toBeNull();
    expect(parseQueryNode({ kind: 'FunnelCorrelationQuery', source: {} })).toBeNull();
    expect(parseQueryNode({ kind: 'toString' })).toBeNull();
    expect(QUERY_API_KINDS).toEqual(
      expect.arrayContaining([
        'TrendsQuery',
        'FunnelsQuery',
        'FunnelsActorsQuery',
        'FunnelCorrelationActorsQuery',
        'RetentionQuery',
        'RetentionActorsQuery',
        'EventsQuery',
        'PathsQuery',
        'PathsActorsQuery',
        'HogQLQuery',
        'TrendsActorsQuery',
      ]),
    );
    expect(QUERY_API_KINDS).not.toContain('FunnelCorrelationQuery');
  });

  it('gives every kind its own metric and cache label', () => {
    const labels = Object.values(QUERY_RUNNERS).map((runner) => runner.label);
    expect(new Set(labels).size).toBe(labels.length);
  });
});

describe('saved insight query', () => {
  it('runs its insight node (an InsightVizNode read through), else its legacy filters by insight', () => {
    expect(parseSavedInsightQuery({ filters: {}, query: { kind: 'InsightVizNode', source: funnels } })?.kind).toBe('FunnelsQuery');
    expect(parseSavedInsightQuery({ filters: { events: [{ id: 'a' }] }, query: null })?.kind).toBe('TrendsQuery');
    expect(parseSavedInsightQuery({ filters: { insight: 'FUNNELS', events: [{ id: 'a' }, { id: 'b' }] }, query: null })?.kind).toBe('FunnelsQuery');
  });

  it('runs a trend shown as stickiness (shown_as, or insight STICKINESS) and a StickinessQuery node as stickiness', () => {
    const events = [{ id: 'a' }];
    expect(parseSavedInsightQuery({ filters: { insight: 'TRENDS', shown_as: 'Stickiness', events }, query: null })?.kind).toBe('StickinessQuery');
    expect(parseSavedInsightQuery({ filters: { shown_as: 'Stickiness', events }, query: null })?.kind).toBe('StickinessQuery');
    expect(parseSavedInsightQuery({ filters: { insight: 'STICKINESS', events }, query: null })?.kind).toBe('StickinessQuery');
    const node = { kind: 'StickinessQuery', series: [{ kind: 'EventsNode', event: 'a' }] };
    expect(parseSavedInsightQuery({ filters: {}, query: { kind: 'InsightVizNode', source: node } })?.kind).toBe('StickinessQuery');
  });

  it('runs a trend shown as lifecycle (shown_as, or insight LIFECYCLE) and a LifecycleQuery node as lifecycle', () => {
    const events = [{ id: 'a' }];
    expect(parseSavedInsightQuery({ filters: { insight: 'TRENDS', shown_as: 'Lifecycle', events }, query: null })?.kind).toBe('LifecycleQuery');
    expect(parseSavedInsightQuery({ filters: { insight: 'LIFECYCLE', events }, query: null })?.kind).toBe('LifecycleQuery');
    const node = { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: 'a' }] };
    expect(parseSavedInsightQuery({ filters: {}, query: { kind: 'InsightVizNode', source: node } })?.kind).toBe('LifecycleQuery');
  });

  it('runs legacy retention filters, which name no series', () => {
    expect(parseSavedInsightQuery({ filters: { insight: 'RETENTION', period: 'Week' }, query: null })?.kind).toBe('RetentionQuery');
  });

  it('runs legacy paths filters and PathsQuery nodes, which name no series', () => {
    expect(parseSavedInsightQuery({ filters: { insight: 'PATHS', include_event_types: ['$pageview'] }, query: null })?.kind).toBe('PathsQuery');
    expect(parseSavedInsightQuery({ filters: {}, query: { kind: 'InsightVizNode', source: { kind: 'PathsQuery', pathsFilter: {} } } })?.kind).toBe(
      'PathsQuery',
    );
  });

  it('has nothing to run without a series, for another insight type, or for a non-insight node', () => {
    expect(parseSavedInsightQuery({ filters: {}, query: null })).toBeNull();
    expect(parseSavedInsightQuery({ filters: { insight: 'SESSIONS', events: [{ id: 'a' }] }, query: null })).toBeNull();
    expect(parseSavedInsightQuery({ filters: {}, query: { kind: 'FunnelsActorsQuery', source: funnels } })).toBeNull();
  });
});
