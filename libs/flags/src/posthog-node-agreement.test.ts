/**
 * The engine against posthog-node's own local evaluation (the SDK PostHog ships), on
 * generated flag definitions × random persons. posthog-node is fed the definitions
 * through its documented `fetch` option and asked with `onlyEvaluateLocally`, so every
 * value it returns is one it decided itself.
 *
 * Left out, because the SDK differs from the server by design (docs/flags.md#where-sdk-local-evaluation-differs) and the
 * engine follows the server: experience continuity, static cohorts and missing person
 * properties (the SDK defers to the server: such results are absent from its answer and
 * counted as "deferred"), super conditions (the SDK ignores them), is_date_exact (not in
 * the SDK), null property values, gt/lt on non-numeric values, and condition ordering
 * (generated flags already list variant-override conditions first, so the server's
 * stable sort is the identity).
 */
import { PostHog } from 'posthog-node';
import { evaluateFlags, type CohortDefinition, type FlagCondition, type FlagDefinition, type PropertyFilter, type PropertyGroup } from './index';

/** Deterministic PRNG (mulberry32) so a failure reproduces. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
    id: () => Math.floor(next() * 2 ** 32).toString(36) + Math.floor(next() * 2 ** 32).toString(36),
  };
}
type Rng = ReturnType<typeof rng>;

const PLANS = ['free', 'pro', 'Pro', 'enterprise', 'team'];
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'us', 'Gb'];
const DOMAINS = ['example.com', 'Example.org', 'acme.io', 'posthog.com'];
const INDUSTRIES = ['saas', 'retail', 'Finance', 'health'];
const RELATIVE = ['-30d', '-2y', '-6m', '-12h', '-3w', '-400d', '-1y'];

function person(r: Rng) {
  const deviceId = r.id();
  return {
    distinctId: r.chance(0.5) ? `user-${r.int(1, 1_000_000)}` : r.id(),
    deviceId,
    properties: {
      plan: r.pick(PLANS),
      country: r.pick(COUNTRIES),
      email: `${r.pick(['ann', 'bob', 'Cy', 'dee'])}${r.int(1, 99)}@${r.pick(DOMAINS)}`,
      age: r.chance(0.5) ? r.int(1, 90) : r.int(100, 9000) / 100,
      beta: r.pick([true, false, 'true', 'false', 'TRUE']),
      app_version: `${r.int(0, 3)}.${r.int(0, 12)}.${r.int(0, 20)}`,
      signup: new Date(Date.UTC(2020, 0, 1) + r.next() * 6 * 365 * 86_400_000).toISOString(),
      $device_id: deviceId,
    } as Record<string, unknown>,
  };
}

function groupProperties(r: Rng) {
  return { size: r.int(1, 5000), industry: r.pick(INDUSTRIES), tier: r.pick(['gold', 'silver', 'Bronze']) };
}

function personFilter(r: Rng): PropertyFilter {
  const kind = r.int(0, 6);
  const person = (key: string, operator: string, value: unknown): PropertyFilter => ({ key, operator, value, type: 'person' });
  switch (kind) {
    case 0: {
      const key = r.pick(['plan', 'country']);
      const domain = key === 'plan' ? PLANS : COUNTRIES;
      const operator = r.pick(['exact', 'is_not', 'icontains', 'not_icontains', 'starts_with', 'ends_with', 'not_starts_with', 'is_set', 'is_not_set']);
      const value =
        operator.startsWith('exact') || operator === 'is_not'
          ? r.chance(0.5)
            ? [r.pick(domain), r.pick(domain)]
            : r.pick(domain)
          : r.pick(domain).slice(0, r.int(1, 3));
      return person(key, operator, value);
    }
    case 1:
      return person('email', r.pick(['regex', 'not_regex', 'icontains']), r.pick(['^a', '\\d{2}@', 'example\\.(com|org)$', '[b-d]', 'POSTHOG', 'acme']));
    case 2:
      return person('age', r.pick(['gt', 'gte', 'lt', 'lte']), r.chance(0.7) ? r.int(1, 90) : String(r.int(1, 90)));
    case 3:
      return person('beta', 'exact', r.pick([true, false, 'true', 'False']));
    case 4:
      return person(
        'app_version',
        r.pick(['semver_gt', 'semver_gte', 'semver_lt', 'semver_lte', 'semver_eq', 'semver_neq']),
        `${r.int(0, 3)}.${r.int(0, 12)}.${r.int(0, 20)}`,
      );
    case 5:
      return r.chance(0.5)
        ? person('app_version', 'semver_tilde', `${r.int(0, 3)}.${r.int(0, 12)}.${r.int(0, 5)}`)
        : r.chance(0.5)
          ? person('app_version', 'semver_caret', `${r.int(0, 2)}.${r.int(0, 12)}.${r.int(0, 5)}`)
          : person('app_version', 'semver_wildcard', r.chance(0.5) ? `${r.int(0, 3)}.*` : `${r.int(0, 3)}.${r.int(0, 12)}.*`);
    default:
      return person(
        'signup',
        r.pick(['is_date_before', 'is_date_after']),
        r.chance(0.5) ? r.pick(RELATIVE) : `${r.int(2020, 2025)}-0${r.int(1, 9)}-1${r.int(0, 9)}`,
      );
  }
}

function groupFilter(r: Rng, index: number): PropertyFilter {
  const kind = r.int(0, 2);
  if (kind === 0) return { key: 'size', operator: r.pick(['gt', 'lt', 'gte']), value: r.int(1, 5000), type: 'group', group_type_index: index };
  if (kind === 1)
    return { key: 'industry', operator: r.pick(['exact', 'is_not', 'icontains']), value: r.pick(INDUSTRIES), type: 'group', group_type_index: index };
  return { key: 'tier', operator: 'exact', value: [r.pick(['gold', 'silver', 'bronze']), 'GOLD'], type: 'group', group_type_index: index };
}

function cohorts(r: Rng): CohortDefinition[] {
  const made: CohortDefinition[] = [];
  for (let id = 1; id <= 6; id++) {
    const and = (): PropertyGroup => ({
      type: 'AND',
      values: Array.from({ length: r.int(1, 3) }, () => ({ ...personFilter(r), negation: r.chance(0.2) })),
    });
    const values: PropertyGroup[] = Array.from({ length: r.int(1, 2) }, and);
    if (id > 3 && r.chance(0.6)) values[0]!.values.push({ key: 'id', type: 'cohort', value: r.int(1, 3), negation: r.chance(0.3) });
    made.push({ id, is_static: false, properties: { type: r.pick(['OR', 'AND'] as const), values } });
  }
  return made;
}

const ROLLOUTS = [null, 0, 0.1, 5.5, 25, 50, 77.7, 100, 100];

function flags(r: Rng, count: number): FlagDefinition[] {
  const made: FlagDefinition[] = [];
  for (let i = 0; i < count; i++) {
    const groupIndex = r.chance(0.2) ? r.int(0, 1) : null;
    const variants = r.chance(0.4)
      ? (() => {
          const n = r.int(2, 4);
          const shares = Array.from({ length: n }, () => r.int(1, 10));
          const total = shares.reduce((a, b) => a + b, 0);
          let left = r.chance(0.8) ? 100 : 90;
          return shares.map((share, k) => {
            const pct = k === n - 1 ? left : Math.floor((share / total) * 100);
            left -= pct;
            return { key: `v${k}`, rollout_percentage: pct };
          });
        })()
      : null;
    const conditions: FlagCondition[] = Array.from({ length: r.int(1, 3) }, () => {
      const condition: FlagCondition = { rollout_percentage: r.pick(ROLLOUTS) };
      const mixedGroup = groupIndex === null && r.chance(0.1) ? r.int(0, 1) : null;
      if (mixedGroup !== null) condition.aggregation_group_type_index = mixedGroup;
      const filters: PropertyFilter[] = [];
      for (let k = r.int(0, 3); k > 0; k--) {
        if (groupIndex !== null || mixedGroup !== null) filters.push(groupFilter(r, (groupIndex ?? mixedGroup)!));
        else if (r.chance(0.12)) filters.push({ key: 'id', type: 'cohort', value: r.int(1, 6), operator: r.pick(['in', 'not_in']) });
        else if (r.chance(0.1) && made.length > 0) {
          const dependency = r.pick(made.filter((f) => !f.filters.groups!.some((g) => (g.properties ?? []).some((p) => p.type === 'flag'))));
          if (dependency) {
            const expected = r.pick<unknown>([true, false, ...(dependency.filters.multivariate?.variants.map((v) => v.key) ?? [])]);
            filters.push({ key: dependency.key, type: 'flag', operator: 'flag_evaluates_to', value: expected, dependency_chain: [dependency.key] });
          }
        } else filters.push(personFilter(r));
      }
      condition.properties = filters;
      if (variants && r.chance(0.25)) condition.variant = r.chance(0.9) ? r.pick(variants).key : 'not-a-variant';
      return condition;
    });
    // The server evaluates variant-override conditions first; the SDK goes in array order.
    conditions.sort((a, b) => Number(!a.variant) - Number(!b.variant));
    const payloads: Record<string, string> = {};
    if (r.chance(0.6)) payloads['true'] = JSON.stringify({ flag: i });
    for (const v of variants ?? []) if (r.chance(0.7)) payloads[v.key] = JSON.stringify({ variant: v.key, n: r.int(1, 9) });
    made.push({
      id: 1000 + i,
      team_id: 1,
      key: `flag-${i}-${r.id()}`,
      name: '',
      active: r.chance(0.9),
      ensure_experience_continuity: false,
      version: 1,
      bucketing_identifier: groupIndex === null && r.chance(0.1) ? 'device_id' : 'distinct_id',
      filters: {
        groups: conditions,
        multivariate: variants ? { variants } : null,
        aggregation_group_type_index: groupIndex,
        payloads,
        early_exit: r.chance(0.1),
        holdout: r.chance(0.1) ? { id: r.int(1, 50), exclusion_percentage: r.pick([5, 10, 30]) } : null,
      },
    });
  }
  return made;
}

const GROUP_TYPES = new Map([
  [0, 'company'],
  [1, 'project'],
]);

async function compareRound(seed: number, flagCount: number, personCount: number) {
  const r = rng(seed);
  const definitions = flags(r, flagCount);
  const cohortList = cohorts(r);
  const body = {
    flags: definitions,
    group_type_mapping: { '0': 'company', '1': 'project' },
    cohorts: Object.fromEntries(cohortList.map((c) => [String(c.id), c.properties])),
  };
  const client = new PostHog('phc_agreement', {
    host: 'http://sdk.invalid',
    personalApiKey: 'phx_agreement',
    featureFlagsPollingInterval: 3_600_000,
    flushAt: 100_000,
    flushInterval: 3_600_000,
    fetch: async (url: string) => {
      const ok = String(url).includes('/flags/definitions');
      const text = JSON.stringify(ok ? body : {});
      return { status: ok ? 200 : 404, headers: new Headers(), text: async () => text, json: async () => JSON.parse(text) } as never;
    },
  });
  try {
    return await compareWith(client, r, definitions, cohortList, personCount);
  } finally {
    await client.shutdown();
  }
}

async function compareWith(client: PostHog, r: Rng, definitions: FlagDefinition[], cohortList: CohortDefinition[], personCount: number) {
  expect(await client.waitForLocalEvaluationReady(5000)).toBe(true);
  const cohortMap = new Map(cohortList.map((c) => [c.id, c]));
  let compared = 0;
  let deferred = 0;
  const outcomes = { true: 0, false: 0, variant: 0 };
  const mismatches: unknown[] = [];
  for (let p = 0; p < personCount; p++) {
    const someone = person(r);
    const groups: Record<string, string> = {};
    const groupProps: Record<string, Record<string, unknown>> = {};
    if (r.chance(0.7)) groups['company'] = `company-${r.int(1, 500)}`;
    if (r.chance(0.5)) groups['project'] = `project-${r.int(1, 500)}`;
    for (const name of Object.keys(groups)) groupProps[name] = groupProperties(r);
    const sdk = await client.getAllFlagsAndPayloads(someone.distinctId, {
      personProperties: someone.properties as Record<string, string>,
      groups,
      groupProperties: groupProps as Record<string, Record<string, string>>,
      onlyEvaluateLocally: true,
    });
    const ours = evaluateFlags(definitions, {
      distinctId: someone.distinctId,
      deviceId: someone.deviceId,
      // Both the service and the SDK add distinct_id to person properties and $group_key to group properties.
      personProperties: { distinct_id: someone.distinctId, ...someone.properties },
      groups,
      groupProperties: Object.fromEntries(Object.entries(groupProps).map(([name, props]) => [name, { $group_key: groups[name], ...props }])),
      groupTypeNames: GROUP_TYPES,
      cohorts: cohortMap,
      staticCohortIds: new Set(),
      hashKeyOverrides: {},
      now: new Date(),
    });
    const sdkFlags = sdk.featureFlags ?? {};
    for (const [key, result] of ours) {
      if (!(key in sdkFlags)) {
        deferred++;
        continue;
      }
      compared++;
      const value = result.variant ?? result.enabled;
      outcomes[value === true ? 'true' : value === false ? 'false' : 'variant']++;
      const payload = result.payload === null ? undefined : JSON.parse(result.payload as string);
      const sdkPayload = sdk.featureFlagPayloads?.[key] ?? undefined;
      if (sdkFlags[key] !== value || JSON.stringify(sdkPayload) !== JSON.stringify(payload)) {
        mismatches.push({
          key,
          distinctId: someone.distinctId,
          ours: { value, payload, reason: result.reason },
          sdk: { value: sdkFlags[key], payload: sdkPayload },
        });
      }
    }
  }
  return { compared, deferred, outcomes, mismatches };
}

describe('engine vs posthog-node local evaluation', () => {
  it('agrees on every decision the SDK makes locally', async () => {
    let compared = 0;
    let deferred = 0;
    const outcomes = { true: 0, false: 0, variant: 0 };
    const mismatches: unknown[] = [];
    for (const seed of [1, 2, 3, 4, 5]) {
      const round = await compareRound(seed, 60, 400);
      compared += round.compared;
      deferred += round.deferred;
      for (const k of ['true', 'false', 'variant'] as const) outcomes[k] += round.outcomes[k];
      mismatches.push(...round.mismatches);
    }
    // The figure the issue asks for; printed so the note can quote it.
    process.stdout.write(
      `posthog-node agreement: ${compared} decisions compared (${outcomes.true} true, ${outcomes.variant} variants, ${outcomes.false} false), ` +
        `${deferred} deferred to the server by the SDK, ${mismatches.length} mismatches\n`,
    );
    expect(mismatches.slice(0, 5)).toEqual([]);
    expect(compared).toBeGreaterThan(100_000);
    // The comparison must not be vacuous: every outcome kind occurs often.
    expect(Math.min(outcomes.true, outcomes.false, outcomes.variant)).toBeGreaterThan(5_000);
  }, 120_000);
});
