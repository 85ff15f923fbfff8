import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { sameEngineAs } from './analytics-store';
import { analyticsQuerySettings, type AnalyticsQueryLimits } from './query-limits';
import { createReadGate, type ReadGate } from './read-gate';

/** How a query ended, as the duration histogram labels it. */
export type QueryOutcome = 'ok' | 'limit' | 'error';

/** Where queryClickhouse times each query (prom-client's Histogram<'kind' | 'result'> is one). */
export interface QueryDurationObserver {
  observe(labels: { kind: string; result: QueryOutcome }, seconds: number): void;
}

export interface AnalyticsReadOptions {
  /** Times every query by kind and outcome; absent: not timed. */
  duration?: QueryDurationObserver;
  /**
   * Awaited between slices of a large result's rows, so the process serves other requests while
   * it parses (the api passes its turn-taking nextWorkTurn); absent: parsed in one go.
   */
  nextTurn?: () => Promise<void>;
}

/** What queryClickhouse applies to the queries of a client made by boundAnalyticsReads. */
export interface AnalyticsReadContext extends AnalyticsReadOptions {
  limits: AnalyticsQueryLimits;
  /** The limits as settings; they override the same settings a caller passes. */
  settings: ClickHouseSettings;
  /** With maxConcurrentReads: the reads take turns (read-gate.ts). */
  gate: ReadGate | null;
}

const contexts = new WeakMap<ClickHouseClient, AnalyticsReadContext>();

/**
 * The client a process's request reads use: the same client, under an identity of its own that
 * carries the limits of one query, the read gate and the duration histogram. queryClickhouse
 * applies them; the raw client (the worker's inserts, migrations, jobs) stays unbounded.
 */
export function boundAnalyticsReads(client: ClickHouseClient, limits: AnalyticsQueryLimits, options: AnalyticsReadOptions = {}): ClickHouseClient {
  const gate = limits.maxConcurrentReads > 0 ? createReadGate({ concurrency: limits.maxConcurrentReads, maxWaitMs: limits.maxReadWaitSeconds * 1000 }) : null;
  return withContext(client, { ...options, limits, settings: analyticsQuerySettings(limits), gate });
}

/** Clients of a bounded client with a shorter max_execution_time, by seconds: made once each. */
const shorter = new WeakMap<AnalyticsReadContext, Map<number, ClickHouseClient>>();

/**
 * The client of a project whose own query time limit is `seconds` (projects.query_timeout_seconds):
 * the same reads as `client`'s (its read gate and histogram), each stopped after the lower of
 * `seconds` and the client's own max_execution_time. A limit above the client's cannot lengthen a
 * query; null, or a client made by no boundAnalyticsReads (unbounded), answers `client` itself.
 */
export function withQueryTimeLimit(client: ClickHouseClient, seconds: number | null | undefined): ClickHouseClient {
  const context = contexts.get(client);
  if (!context || seconds == null || !(seconds >= 1) || seconds >= context.limits.maxExecutionSeconds) return client;
  const whole = Math.floor(seconds);
  let bySeconds = shorter.get(context);
  if (!bySeconds) shorter.set(context, (bySeconds = new Map()));
  let limited = bySeconds.get(whole);
  if (!limited) {
    const limits = { ...context.limits, maxExecutionSeconds: whole };
    limited = withContext(client, { ...context, limits, settings: analyticsQuerySettings(limits) });
    bySeconds.set(whole, limited);
  }
  return limited;
}

/** `client` under an identity of its own that carries `context`. */
function withContext(client: ClickHouseClient, context: AnalyticsReadContext): ClickHouseClient {
  // Each method bound once (not on every read): a query pays the property lookup only.
  const methods = new Map<PropertyKey, { of: unknown; bound: unknown }>();
  const bound = new Proxy(client, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let method = methods.get(property);
      if (method?.of !== value) methods.set(property, (method = { of: value, bound: (value as (...args: unknown[]) => unknown).bind(target) }));
      return method.bound;
    },
  });
  contexts.set(bound, context);
  sameEngineAs(bound, client);
  return bound;
}

/** The limits, gate and histogram of a client made by boundAnalyticsReads; undefined for any other. */
export function analyticsReadContextOf(client: ClickHouseClient): AnalyticsReadContext | undefined {
  return contexts.get(client);
}
