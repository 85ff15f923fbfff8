import type { QueryReferences } from '../runners/query-runner';
import type { ParsedFunnelFilter } from './funnel-filter';

/** What a funnel names: its steps, filters, breakdowns, the actions of its exclusions and its aggregation HogQL. */
export const funnelReferences = (filter: ParsedFunnelFilter): QueryReferences => ({
  series: filter.steps,
  properties: filter.properties,
  breakdowns: filter.breakdowns,
  extraActionIds: filter.exclusions.flatMap((x) => (x.actionId === null ? [] : [x.actionId])),
  aggregateByHogQL: filter.aggregateByHogQL,
  filterTestAccounts: filter.filter_test_accounts,
});
