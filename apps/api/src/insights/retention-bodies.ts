import { describedBody } from '../http/body-fields';

/** PostHog's legacy retention filter (RetentionFilter), as parseRetentionFilter reads it. */
export const RETENTION_FIELDS = {
  insight: 'RETENTION',
  target_entity: 'The event (or action) that starts a cohort: {id, type: events|actions}; default $pageview',
  returning_entity: 'The event (or action) that counts as coming back; default $pageview',
  retention_type: 'retention_recurring or retention_first_time',
  period: 'Hour, Day, Week or Month',
  total_intervals: 'Intervals looked ahead from each start interval (default 11)',
  minimum_occurrences: 'Returning events an interval needs to count (default 1)',
  cumulative: 'Count an actor in every interval up to its furthest return',
  date_from: 'First start interval (default: total_intervals before date_to)',
  date_to: 'Last start interval (default now)',
  properties: 'Property filters every event must match',
  filter_test_accounts: "Leave out the project's test accounts",
  breakdown: 'A property (or cohort ids) to split the cohorts by',
  breakdown_type: 'event, person, group or cohort',
  breakdown_group_type_index: 'The group type of a group breakdown',
  aggregation_group_type_index: 'Count groups of this type instead of persons',
  refresh: 'Compute again instead of answering from the cache',
};

export const retentionFilterBody = describedBody('A legacy retention filter', RETENTION_FIELDS);

/** A retention example body: weekly sign-up cohorts coming back to any page. */
export const RETENTION_EXAMPLE = {
  insight: 'RETENTION',
  target_entity: { id: 'signed up', type: 'events' },
  returning_entity: { id: '$pageview', type: 'events' },
  period: 'Week',
  total_intervals: 8,
};
