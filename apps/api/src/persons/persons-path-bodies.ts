import { describedBody } from '../http/body-fields';

/** PostHog's legacy PATHS filter and which persons of it (ee/clickhouse/views/person.py `path`). */
export const pathActorsBody = describedBody('A legacy paths filter and which persons of it', {
  insight: 'PATHS',
  include_event_types: '$pageview, $screen, custom_event and/or hogql (see insights/path/)',
  start_point: 'Paths from this item',
  end_point: 'Paths up to this item',
  step_limit: 'Steps per path (default 5)',
  path_groupings: 'Items grouped under one name: each a text where * matches anything',
  exclude_events: 'Items left out (with include_event_types)',
  local_path_cleaning_filters: 'Rules [{regex, alias}] (RE2) rewriting each item, in order',
  date_from: 'Start (default -7d)',
  date_to: 'End (default now)',
  properties: 'Property filters every event must match',
  filter_test_accounts: "Leave out the project's test accounts",
  path_start_key: 'The edge starts at this step key (1_/pricing)',
  path_end_key: 'The edge ends at this step key (2_/signup)',
  path_dropoff_key: 'The persons whose session path ended at this step key',
  limit: 'Persons per page (default 100)',
  offset: 'Where the page starts',
});
