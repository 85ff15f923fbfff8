import { describedBody } from './body-fields';

/** PostHog's legacy insight filter (posthog/models/filters), as parseTrendFilter and parseFunnelFilter read it. */
const FILTER_FIELDS = {
  insight: 'TRENDS or FUNNELS',
  events: 'Series of events: [{id, name, math, math_property, properties, order, custom_name}]',
  actions: 'Series of actions: [{id, math, properties, order}]',
  date_from: 'Start: -7d, -1m, a date or a datetime (default -7d)',
  date_to: 'End (default now)',
  interval: 'hour, day, week or month',
  properties: 'Property filters every event must match (a list, or a group {type, values})',
  filter_test_accounts: "Leave out the project's test accounts",
  breakdown: 'A property (or cohort ids) to split each series by',
  breakdown_type: 'event, person, group, cohort, hogql',
  breakdown_group_type_index: 'The group type of a group breakdown',
  refresh: 'Compute again instead of answering from the cache',
};

const FUNNEL_FIELDS = {
  ...FILTER_FIELDS,
  funnel_window_interval: 'How long a person has to complete the funnel',
  funnel_window_interval_unit: 'minute, hour, day, week or month',
  funnel_viz_type: 'steps, time_to_convert or trends',
  funnel_order_type: 'ordered, strict or unordered',
  exclusions: 'Events that exclude a person between two steps',
  breakdown_attribution_type: 'first_touch, last_touch, all_events or step',
};

export const trendFilterBody = describedBody('A legacy trends filter', {
  ...FILTER_FIELDS,
  display: 'ActionsLineGraph, ActionsTable, BoldNumber, …',
  compare: 'Also answer the previous period',
  formula: 'A formula over the series (A + B, …)',
});

export const funnelFilterBody = describedBody('A legacy funnel filter', FUNNEL_FIELDS);

export const funnelCorrelationBody = describedBody('A legacy funnel filter and what to correlate', {
  ...FUNNEL_FIELDS,
  funnel_correlation_type: 'events, properties or event_with_properties',
  funnel_correlation_names: 'The person properties to correlate (properties)',
  funnel_correlation_exclude_names: 'Properties to leave out',
  funnel_correlation_event_names: 'The events whose properties to correlate (event_with_properties)',
  funnel_correlation_exclude_event_names: 'Events to leave out',
});

/** The persons behind a funnel step (or a correlation row): the funnel, the step, the page. */
export const funnelActorsBody = describedBody('A legacy funnel filter and which persons of it', {
  ...FUNNEL_FIELDS,
  funnel_step: 'The step (1-based); negative: the persons who dropped off before it',
  funnel_step_breakdown: 'The breakdown value whose persons to list',
  funnel_custom_steps: 'Steps whose persons to list together',
  funnel_correlation_person_entity: 'The event of a correlation row (correlation persons)',
  funnel_correlation_person_converted: 'true: persons who converted, false: who dropped off',
  limit: 'Persons per page',
  offset: 'Where the page starts',
});
