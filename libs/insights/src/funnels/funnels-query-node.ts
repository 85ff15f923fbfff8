import { isJsonObject } from '@sightline/json-input';
import { commonQueryFields, seriesToEntities } from '../common/query-node-fields';

/** A FunnelsQuery node (PostHog's query API) read as the legacy funnel filter. */
export function funnelsQueryToFilter(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...seriesToEntities(query['series']), ...commonQueryFields(query) };
  const funnels = isJsonObject(query['funnelsFilter']) ? query['funnelsFilter'] : {};
  const renames: Record<string, string> = {
    funnelOrderType: 'funnel_order_type',
    funnelVizType: 'funnel_viz_type',
    funnelWindowInterval: 'funnel_window_interval',
    funnelWindowIntervalUnit: 'funnel_window_interval_unit',
    funnelFromStep: 'funnel_from_step',
    funnelToStep: 'funnel_to_step',
    binCount: 'bin_count',
    breakdownAttributionType: 'breakdown_attribution_type',
    breakdownAttributionValue: 'breakdown_attribution_value',
    funnelAggregateByHogQL: 'funnel_aggregate_by_hogql',
  };
  for (const [from, to] of Object.entries(renames)) if (funnels[from] !== undefined) out[to] = funnels[from];
  if (Array.isArray(funnels['exclusions'])) {
    out['exclusions'] = funnels['exclusions'].map((x) =>
      isJsonObject(x)
        ? {
            id: x['kind'] === 'ActionsNode' ? x['id'] : (x['event'] ?? null),
            type: x['kind'] === 'ActionsNode' ? 'actions' : 'events',
            funnel_from_step: x['funnelFromStep'],
            funnel_to_step: x['funnelToStep'],
            ...(x['properties'] !== undefined ? { properties: x['properties'] } : {}),
          }
        : x,
    );
  }
  return out;
}
