/**
 * A flag's lifecycle status as PostHog's FeatureFlagStatusChecker decides it
 * (posthog/models/feature_flag/flag_status.py): deleted, stale (fully
 * rolled out and more than 30 days old), otherwise active. Builds that know when a
 * flag was last called also use that; Sightline does not record it, so it is not used.
 */
export type FlagStatus = 'active' | 'stale' | 'deleted' | 'unknown';

export interface StatusInput {
  deleted: boolean;
  active: boolean;
  filters: Record<string, unknown>;
  created_at: Date;
}

const STALE_AFTER_MS = 30 * 86_400_000;

type Condition = { rollout_percentage?: unknown; properties?: unknown; variant?: unknown };

const conditionsOf = (filters: Record<string, unknown>): Condition[] =>
  Array.isArray(filters['groups']) ? (filters['groups'] as Condition[]).filter((g) => typeof g === 'object' && g !== null) : [];

/** A condition that matches everyone: 100 % and no properties. */
const matchesEveryone = (c: Condition) => c.rollout_percentage === 100 && (!Array.isArray(c.properties) || c.properties.length === 0);

function variantsOf(filters: Record<string, unknown>): { key?: unknown; rollout_percentage?: unknown }[] {
  const multivariate = filters['multivariate'] as { variants?: unknown } | null | undefined;
  return multivariate && Array.isArray(multivariate.variants) ? multivariate.variants : [];
}

/** Why the flag always gives the same answer, or null when it does not. */
export function fullyRolledOutExplanation(flag: Pick<StatusInput, 'deleted' | 'active' | 'filters'>): string | null {
  if (flag.deleted || !flag.active) return null;
  const conditions = conditionsOf(flag.filters);
  const variants = variantsOf(flag.filters);
  if (variants.length > 0) {
    const fullVariant = variants.find((v) => v.rollout_percentage === 100);
    for (const condition of conditions) {
      if (!matchesEveryone(condition)) continue;
      if (condition.variant !== undefined && condition.variant !== null) return `This flag will always use the variant "${String(condition.variant)}"`;
      if (fullVariant) return `This flag will always use the variant "${String(fullVariant.key)}"`;
    }
    return null;
  }
  return conditions.some(matchesEveryone) ? 'This boolean flag will always evaluate to "true"' : null;
}

export function flagStatus(flag: StatusInput | null, nowMs: number): { status: FlagStatus; reason: string } {
  if (!flag) return { status: 'unknown', reason: 'Flag could not be found' };
  if (flag.deleted) return { status: 'deleted', reason: 'Flag has been deleted' };
  const explanation = fullyRolledOutExplanation(flag);
  if (explanation && flag.created_at.getTime() < nowMs - STALE_AFTER_MS) return { status: 'stale', reason: explanation };
  return { status: 'active', reason: 'Flag is not fully rolled out and may still be active' };
}
