import { describedBody } from '../http/body-fields';

/** PostHog's legacy PATHS filter (posthog/models/filters/path_filter.py), as parsePathsFilter reads it. */
export const pathFilterBody = describedBody('A legacy paths filter', {
  insight: 'PATHS',
  include_event_types: 'What becomes a path item: $pageview (its URL), $screen (its screen name), custom_event (its name), hogql',
  path_type: 'One of those types (the older form of include_event_types)',
  paths_hogql_expression: 'The HogQL expression naming each item (with include_event_types hogql)',
  start_point: 'Paths from this item',
  end_point: 'Paths up to this item',
  step_limit: 'Steps per path (default 5)',
  edge_limit: 'Edges answered (default 50)',
  min_edge_weight: 'Only edges taken at least this many times',
  max_edge_weight: 'Only edges taken at most this many times',
  path_groupings: 'Items grouped under one name: each a text where * matches anything',
  exclude_events: 'Items left out (with include_event_types)',
  local_path_cleaning_filters: 'Rules [{regex, alias}] (RE2) rewriting each item, in order',
  date_from: 'Start: -7d, -1m, a date or a datetime (default -7d)',
  date_to: 'End (default now)',
  properties: 'Property filters every event must match (a list, or a group {type, values})',
  filter_test_accounts: "Leave out the project's test accounts",
  refresh: 'Compute again instead of answering from the cache',
});
