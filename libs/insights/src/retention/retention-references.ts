import type { QueryReferences } from '../runners/query-runner';
import type { ParsedRetentionFilter } from './retention-filter';

/** What a retention query names: its two entities (events or actions), filters and breakdown. */
export function retentionReferences(filter: ParsedRetentionFilter): QueryReferences {
  return {
    series: [filter.target, filter.returning].map((e) => ({ kind: e.kind, id: e.id, properties: e.properties })),
    properties: filter.properties,
    breakdowns: filter.breakdowns.map((b) => ({ type: b.type, property: b.property })),
    filterTestAccounts: filter.filter_test_accounts,
  };
}
