import type { ClickHouseClient } from '@sightline/clickhouse';
import type { MetadataStore } from '@sightline/postgres';
import { setHasEnrichedAnalytics, type FlagRow } from './feature-flags.repository';
import { hasEnrichedEvents } from './flag-enriched-events.query';
import { addEnrichedInsights, createUsageDashboard, dashboardHasEnrichedInsights } from './usage-dashboard';

/** What a usage-dashboard action came to: done, or the reason PostHog gives (with the failure behind it, if any). */
export type UsageDashboardOutcome = { ok: true } | { ok: false; error: string; cause?: unknown };

/** Creates the flag's usage dashboard (with the enriched insights when the flag has enriched analytics), in one transaction. */
export async function createFlagUsageDashboard(db: MetadataStore, flag: FlagRow, userId: number): Promise<UsageDashboardOutcome> {
  try {
    await db.transaction(async (tx) => {
      const dashboardId = await createUsageDashboard(tx, flag, userId);
      if (flag.has_enriched_analytics) await addEnrichedInsights(tx, flag, dashboardId, userId);
    });
  } catch (cause) {
    return { ok: false, error: 'Unable to generate usage dashboard', cause };
  }
  return { ok: true };
}

/**
 * Adds the enriched insights to the flag's usage dashboard, as PostHog's enrich_usage_dashboard:
 * refused without a usage dashboard, when it already has them, or when no enriched events name
 * the flag; finding such events marks the flag as having enriched analytics.
 */
export async function enrichFlagUsageDashboard(
  stores: { db: MetadataStore; ch: ClickHouseClient },
  flag: FlagRow,
  userId: number,
): Promise<UsageDashboardOutcome> {
  const { db, ch } = stores;
  const dashboardId = flag.usage_dashboard_id;
  if (dashboardId === null) return { ok: false, error: 'Usage dashboard not found' };
  if (await dashboardHasEnrichedInsights(db, dashboardId)) return { ok: false, error: 'Usage dashboard already has enriched data' };
  if (!flag.has_enriched_analytics) {
    if (!(await hasEnrichedEvents(ch, flag.team_id, flag.key))) return { ok: false, error: 'No enriched analytics available for this feature flag' };
    await setHasEnrichedAnalytics(db, flag.id);
  }
  try {
    await db.transaction((tx) => addEnrichedInsights(tx, flag, dashboardId, userId));
  } catch (cause) {
    return { ok: false, error: 'Unable to enrich usage dashboard', cause };
  }
  return { ok: true };
}
