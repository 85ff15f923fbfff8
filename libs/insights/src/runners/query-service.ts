import { createHash } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { withQueryTimeLimit, type ClickHouseLayout } from '@sightline/clickhouse';
import { jsonByteLength } from '@sightline/http';
import type { Metrics } from '@sightline/metrics';
import type { Sql } from '@sightline/postgres';
import { createAnswerCache, DEFAULT_ANSWER_CACHE_BYTES } from '../common/answer-cache';
import { QueryInputError } from '../common/events-sql';
import { queryProject, type QueryProject, type QueryProjectRow } from '../common/query-project';
import { stableJson } from '../common/stable-json';
import { parseQueryNode } from './query-node';
import { createQueryPreparation } from './query-preparation';
import { checkProjectSettings, withInputErrors } from './query-input';
import { runnerOf, type AnswerOf, type ParsedQuery, type QueryKind, type QueryOf } from './registry';

/** The largest answer (its JSON) a query may give; docs/http-api.md#limits. */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export interface QueryServiceDeps {
  db: Sql;
  ch: ClickHouseClient;
  /** How ClickHouse's tables are laid out (CLICKHOUSE_CLUSTER); absent: one server. */
  layout?: ClickHouseLayout;
  /** How long an answer is served from the cache; 0 turns caching off. */
  cacheTtlMs: number;
  /** The most bytes (of the answers' JSON) the cache holds; default DEFAULT_ANSWER_CACHE_BYTES. */
  cacheMaxBytes?: number;
  /** The largest answer given; default MAX_ANSWER_BYTES. */
  maxAnswerBytes?: number;
  /** Where the time each computed answer took is observed (insight_query_duration_seconds); absent: nowhere. */
  metrics?: Pick<Metrics, 'insightQueryDuration'>;
}

export interface RunOptions {
  /** Compute the answer again (and cache it) rather than serve a cached one. */
  refresh?: boolean;
}

/** Runs every kind of query: the one dispatch (through the registry) and the one answer cache. */
export interface QueryService {
  run<K extends QueryKind>(kind: K, project: QueryProjectRow, query: QueryOf<K>, nowMs: number, options?: RunOptions): Promise<AnswerOf<K>>;
  /** A legacy insight filter (insights/trend/, persons/funnel/, …) parsed by the kind's runner, then run. */
  runLegacy<K extends QueryKind>(kind: K, project: QueryProjectRow, input: Record<string, unknown>, nowMs: number, options?: RunOptions): Promise<AnswerOf<K>>;
  /** A parsed query of any kind (a query node, a saved insight). */
  runParsed(project: QueryProjectRow, parsed: ParsedQuery, nowMs: number, options?: RunOptions): Promise<AnswerOf<QueryKind>>;
  /**
   * The answer the cache holds for a parsed query, computing nothing (PostHog's `force_cache`,
   * ExecutionMode.CACHE_ONLY_NEVER_CALCULATE): null when none is held, or the kind is not cached.
   */
  cachedParsed(project: QueryProjectRow, parsed: ParsedQuery, nowMs: number): AnswerOf<QueryKind> | null;
  /** A query API node: the response of its kind (its runner's shape), or null when the query API takes no such node. */
  runNode(project: QueryProjectRow, node: Record<string, unknown>, nowMs: number, options?: RunOptions): Promise<Record<string, unknown> | null>;
  /**
   * Throws what running the query would for an action or cohort the project does not have (or
   * has deleted), without running it: a saved insight is checked when it is written.
   */
  checkReferences(project: QueryProjectRow, parsed: ParsedQuery): Promise<void>;
}

/**
 * Runs a query of any kind with its runner (runners/registry.ts): an answer needing no query is
 * given at once; otherwise the project's settings are checked, the actions and cohorts it names
 * loaded and its HogQL parsed, and the answer computed with ClickHouse's input errors answered
 * as 400s. Answers of cached kinds are kept per (kind, project, normalised query) for
 * `cacheTtlMs`; `refresh` bypasses and replaces the entry.
 */
export function createQueryService(deps: QueryServiceDeps): QueryService {
  const cache = deps.cacheTtlMs > 0 ? createAnswerCache<object>({ ttlMs: deps.cacheTtlMs, maxBytes: deps.cacheMaxBytes ?? DEFAULT_ANSWER_CACHE_BYTES }) : null;
  const maxAnswerBytes = deps.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  const preparation = createQueryPreparation(deps);

  const cacheKeyOf = (label: string, project: QueryProject, normalised: unknown) =>
    createHash('sha256')
      .update(stableJson({ kind: label, project, normalised }))
      .digest('hex');

  /** Serves `compute` from the cache for (label, project, normalised query) unless refreshing. */
  const cached = async <R>(
    label: string,
    project: QueryProject,
    normalised: unknown,
    nowMs: number,
    refresh: boolean,
    compute: () => Promise<R>,
  ): Promise<R> => {
    const key = cacheKeyOf(label, project, normalised);
    const hit = refresh ? undefined : cache?.get(key, nowMs);
    if (hit) return { ...(hit as R), is_cached: true };
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    let result: R;
    try {
      result = await compute();
    } catch (error) {
      deps.metrics?.insightQueryDuration.observe({ kind: label, result: 'error' }, seconds());
      throw error;
    }
    deps.metrics?.insightQueryDuration.observe({ kind: label, result: 'ok' }, seconds());
    // Measured as it will be sent (in slices, between other requests' work): an answer past the
    // bound is refused, and the cache weighs what it keeps by these bytes.
    const bytes = await jsonByteLength(result, maxAnswerBytes);
    if (bytes === null) {
      throw new QueryInputError(
        null,
        `The answer would be larger than ${Math.round(maxAnswerBytes / 1024 / 1024)} MiB, the most one answer may hold. Narrow the date range, use a longer interval, or ask for fewer series or breakdown values.`,
        'answer_too_large',
      );
    }
    cache?.set(key, result as object, bytes, nowMs);
    return result;
  };

  const runAny = async (kind: QueryKind, row: QueryProjectRow, query: unknown, nowMs: number, options: RunOptions): Promise<unknown> => {
    const runner = runnerOf(kind);
    const project = queryProject(row);
    const shortcut = runner.shortcut?.(query, project, nowMs);
    if (shortcut) return shortcut;
    const references = runner.references(query);
    const compute = async () => {
      checkProjectSettings(project, references.filterTestAccounts);
      const { ports, expressions } = await preparation.prepare(project, references, nowMs);
      // The project's own time limit (projects.query_timeout_seconds), when lower than the server's.
      const ch = withQueryTimeLimit(deps.ch, row.query_timeout_seconds);
      return withInputErrors(project, expressions, () => runner.calculate({ ch, db: deps.db, project, ports, nowMs }, query));
    };
    if (!runner.cacheKey) return compute();
    return cached(runner.label, project, runner.cacheKey(query), nowMs, options.refresh ?? false, compute);
  };

  return {
    run: (kind, row, query, nowMs, options = {}) => runAny(kind, row, query, nowMs, options) as never,
    runLegacy: (kind, row, input, nowMs, options = {}) => runAny(kind, row, runnerOf(kind).parseLegacy(input), nowMs, options) as never,
    runParsed: (row, parsed, nowMs, options = {}) => runAny(parsed.kind, row, parsed.query, nowMs, options) as never,
    cachedParsed(row, parsed, nowMs) {
      const runner = runnerOf(parsed.kind);
      if (!runner.cacheKey || !cache) return null;
      const hit = cache.get(cacheKeyOf(runner.label, queryProject(row), runner.cacheKey(parsed.query as never)), nowMs);
      return hit ? ({ ...hit, is_cached: true } as never) : null;
    },
    async runNode(row, node, nowMs, options = {}) {
      const parsed = parseQueryNode(node);
      if (!parsed) return null;
      const answer = await runAny(parsed.kind, row, parsed.query, nowMs, options);
      return runnerOf(parsed.kind).queryApi!.response(answer, queryProject(row), nowMs);
    },
    checkReferences: (row, parsed) => preparation.checkReferences(row.id, runnerOf(parsed.kind).references(parsed.query)),
  };
}
