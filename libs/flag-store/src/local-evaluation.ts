import { createHash } from 'node:crypto';
import { mapStoredGroupProperties, storedPropertyFilters, type FlagDefinition, type PropertyFilter } from '@sightline/flags';
import type { ProjectFlagDefinitions } from './definitions.repository';

/**
 * The body of GET /flags/definitions (and /api/feature_flag/local_evaluation) that server
 * SDKs poll for local evaluation (docs/http-api.md#local-evaluation): flags, group_type_mapping and,
 * with send_cohorts, the dynamic cohorts as property groups. Flag-on-flag filters are
 * rewritten to flag keys with the `dependency_chain` posthog-node needs (dependencies
 * first, the target last; empty for a cycle, which the SDK then defers to the server).
 */
export interface LocalEvaluationBody {
  text: string;
  etag: string;
}

function dependencyChains(flags: readonly FlagDefinition[]) {
  const byRef = new Map<string, FlagDefinition>();
  for (const flag of flags) {
    byRef.set(flag.key, flag);
    byRef.set(String(flag.id), flag);
  }
  const keyOf = (ref: string) => byRef.get(ref)?.key ?? ref;
  const dependenciesOf = (flag: FlagDefinition) =>
    storedPropertyFilters(flag.filters)
      .filter((p) => p.type === 'flag')
      .map((p) => keyOf(String(p.key)));
  const chains = new Map<string, string[]>();
  const chainOf = (key: string, visiting: Set<string>): string[] | null => {
    const known = chains.get(key);
    if (known) return known.length === 0 ? null : known;
    const flag = byRef.get(key);
    if (!flag) return [key]; // missing: the SDK sees an unknown key and defers
    if (visiting.has(key)) return null;
    visiting.add(key);
    const chain: string[] = [];
    for (const dependency of dependenciesOf(flag)) {
      const sub = chainOf(dependency, visiting);
      if (sub === null) {
        visiting.delete(key);
        chains.set(key, []);
        return null;
      }
      for (const k of sub) if (!chain.includes(k)) chain.push(k);
    }
    visiting.delete(key);
    chain.push(key);
    chains.set(key, chain);
    return chain;
  };
  return { keyOf, chainFor: (key: string) => chainOf(key, new Set()) ?? [] };
}

function withDependencyChains(flag: FlagDefinition, deps: ReturnType<typeof dependencyChains>): FlagDefinition['filters'] {
  const rewrite = (p: PropertyFilter): PropertyFilter => {
    if (p.type !== 'flag') return p;
    const key = deps.keyOf(String(p.key));
    return { ...p, key, dependency_chain: deps.chainFor(key) };
  };
  // A malformed stored definition is served as stored: posthog-node fails that flag alone and asks the server.
  return mapStoredGroupProperties(flag.filters, rewrite);
}

const bodies = new WeakMap<ProjectFlagDefinitions, Map<boolean, LocalEvaluationBody>>();

export function localEvaluationBody(definitions: ProjectFlagDefinitions, sendCohorts: boolean): LocalEvaluationBody {
  let perVariant = bodies.get(definitions);
  const cached = perVariant?.get(sendCohorts);
  if (cached) return cached;
  const deps = dependencyChains(definitions.flags);
  const flags = definitions.flags
    .filter((flag) => flag.evaluation_runtime !== 'client')
    .map((flag) => ({
      id: flag.id,
      team_id: flag.team_id,
      name: flag.name,
      key: flag.key,
      filters: withDependencyChains(flag, deps),
      deleted: false,
      active: flag.active,
      ensure_experience_continuity: flag.ensure_experience_continuity,
      version: flag.version,
      evaluation_runtime: flag.evaluation_runtime ?? 'all',
      bucketing_identifier: flag.bucketing_identifier ?? 'distinct_id',
      has_encrypted_payloads: false,
    }));
  const cohorts: Record<string, unknown> = {};
  if (sendCohorts)
    for (const cohort of definitions.cohorts.values()) if (!cohort.is_static && cohort.properties) cohorts[String(cohort.id)] = cohort.properties;
  const groupTypeMapping = Object.fromEntries([...definitions.groupTypeNames].map(([index, name]) => [String(index), name]));
  const text = JSON.stringify({ flags, group_type_mapping: groupTypeMapping, cohorts });
  const body = { text, etag: `"${createHash('sha1').update(text).digest('hex')}"` };
  if (!perVariant) bodies.set(definitions, (perVariant = new Map()));
  perVariant.set(sendCohorts, body);
  return body;
}
