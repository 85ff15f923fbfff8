import type { FunnelActorsResult } from '../funnels/funnel-actors';
import type { QueryContext, QueryReferences } from '../runners/query-runner';

/** How the actors of one insight kind are read when an InsightActorsQuery has it as source. */
export interface InsightActorsSource<Q> {
  /** The InsightActorsQuery node (its `source` the insight) and the ActorsQuery around it, or null. */
  parse(node: Record<string, unknown>, outer: Record<string, unknown> | null): Q;
  references(query: Q): QueryReferences;
  calculate(context: QueryContext, query: Q): Promise<FunnelActorsResult>;
}
