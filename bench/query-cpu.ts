/**
 * Where the fixed cost of POST /api/projects/1/query/ goes, on the embedded stores (PGlite, chdb):
 * the same `SELECT 1` (or PROBE_QUERY) timed at each stage of the request path, each stage
 * alone, so the differences attribute the cost: the engine through the client; queryClickhouse
 * (the limits as settings, the read gate, the row reader); the parse (a cached text) and
 * compile; the query service (project settings, preparation, answer cache, metric, size bound,
 * the answer's shape); and the whole request over HTTP (the key's principal and the project from
 * their caches, routing, the body, the throttle, the JSON answer). A project read from the
 * metadata store is timed too: what the project cache saves; and the request through Express's
 * routers with no fast path: what answering /query/ before Express saves.
 * process.cpuUsage counts every thread (PGlite's and chdb's included).
 *
 *   node --import tsx bench/query-cpu.ts     (PROBE_N requests per round, default 200; PROBE_QUERY)
 *   PROBE_EVENTS=1000000 PROBE_N=30 PROBE_QUERY='SELECT …' PROBE_BASELINE='SELECT … FINAL …' node --import tsx bench/query-cpu.ts
 *       (a bench:sql query over its data, beside its hand-written SQL)
 *   PROBE_ONLY=HTTP node --cpu-prof --import tsx bench/query-cpu.ts   (times only the stages whose name holds it: a profile of one stage)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { ResultSet } from '@clickhouse/client';
import os from 'node:os';
import path from 'node:path';
import { bootstrapInstance, findProjectById } from '@sightline/accounts';
import { createApiApp, createApiRouter } from '@sightline/api';
import {
  boundAnalyticsReads,
  createAnalyticsStore,
  DEFAULT_ANALYTICS_QUERY_LIMITS,
  migrateClickHouse,
  queryClickhouse,
  type ClickHouseClient,
} from '@sightline/clickhouse';
import { compileSelect, createHogQLCompiler } from '@sightline/hogql';
import { createServiceApp, listen, nextWorkTurn } from '@sightline/http';
import { createQueryService } from '@sightline/insights';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { PERSONAL_KEY, startAnalyticsBench } from './analytics-data';

const HOGQL = process.env['PROBE_QUERY'] ?? 'SELECT 1';
const N = Number(process.env['PROBE_N'] ?? 200);
const ROUNDS = 5;
/** With PROBE_EVENTS, the stores hold bench:sql's data (analytics-data.ts) instead of none. */
const EVENTS = Number(process.env['PROBE_EVENTS'] ?? 0);
/** The hand-written SQL of the same answer (as bench:sql's), timed on the engine beside the stages. */
const BASELINE = process.env['PROBE_BASELINE'];

/** Empty embedded stores with one personal key. */
async function emptyStores(): Promise<{ db: MetadataStore; raw: ClickHouseClient; key: string; close(): Promise<void> }> {
  const key = 'phx_bench_query_personal_key';
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-query-'));
  const db = await createMetadataStore({ dataDir: dir });
  await migratePostgres(db);
  await bootstrapInstance(db, { personalApiKey: key });
  const raw = createAnalyticsStore({ dataDir: dir, user: 'default', password: '', database: 'default' });
  await migrateClickHouse(raw);
  return {
    db,
    raw,
    key,
    async close() {
      await raw.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function main() {
  const stores = EVENTS > 0 ? await startAnalyticsBench(EVENTS) : await emptyStores();
  const { db } = stores;
  const raw = 'raw' in stores ? stores.raw : stores.ch;
  const KEY = 'key' in stores ? stores.key : PERSONAL_KEY;
  const metrics = createMetrics();
  // The api as it runs, and the same api reading the project per request (its cache off).
  const apiWith = (projectCacheMaxAgeMs?: number) =>
    createApiApp({
      db,
      ch: raw,
      logger: silentLogger(),
      metrics,
      now: () => Date.now(),
      readiness: [],
      isShuttingDown: () => false,
      insightCacheTtlMs: 60_000,
      projectCacheMaxAgeMs,
    });
  const server = await listen(apiWith(), { host: '127.0.0.1', port: 0 });
  // The same api with its routes only through Express: what answering /query/ before Express saves.
  const viaExpress = (() => {
    const { router } = createApiRouter({ db, ch: raw, logger: silentLogger(), metrics, now: () => Date.now(), insightCacheTtlMs: 60_000 });
    return createServiceApp({ name: 'api', logger: silentLogger(), metrics, readiness: [], isShuttingDown: () => false, routers: [router] });
  })();
  const expressServer = await listen(viaExpress, { host: '127.0.0.1', port: 0 });
  const uncached = await listen(apiWith(0), { host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${server.port}`;
  const body = JSON.stringify({ query: { kind: 'HogQLQuery', query: HOGQL }, refresh: true });

  const postQuery = async (at: string) => {
    const r = await fetch(`${at}/api/projects/1/query/`, {
      method: 'POST',
      body,
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    });
    await r.json();
    if (r.status !== 200) throw new Error(String(r.status));
  };
  // The stages, each built as the api builds it (apps/api/src/app.ts).
  const ch = boundAnalyticsReads(raw, DEFAULT_ANALYTICS_QUERY_LIMITS, { duration: metrics.clickhouseQueryDuration, nextTurn: nextWorkTurn });
  const service = createQueryService({ db, ch, cacheTtlMs: 60_000, metrics });
  const compiler = await createHogQLCompiler();
  const project = (await findProjectById(db, 1))!;
  const compiled = compileSelect(await compiler.parseSelect(HOGQL), { teamId: 1, text: HOGQL, limits: { default: 100, max: 50_000 } });

  // The engine's own answer to the probe, served again without the engine: what the layers above it cost in JavaScript alone.
  const canned = await (await raw.query({ query: compiled.sql, query_params: compiled.params, format: 'JSONCompactEachRowWithNamesAndTypes' })).text();
  const cannedClient = {
    query: async ({ format }: { format: 'JSONCompactEachRowWithNamesAndTypes' }) => new ResultSet(Readable.from([Buffer.from(canned)]), format, 'canned'),
  } as unknown as ClickHouseClient;
  const cannedCh = boundAnalyticsReads(cannedClient, DEFAULT_ANALYTICS_QUERY_LIMITS, { duration: metrics.clickhouseQueryDuration, nextTurn: nextWorkTurn });
  const cannedService = createQueryService({ db, ch: cannedCh, cacheTtlMs: 60_000, metrics });

  const stages: Stage[] = [
    ...(BASELINE
      ? [['hand-written SQL on the engine (PROBE_BASELINE)', async () => (await raw.query({ query: BASELINE, format: 'JSONCompactEachRow' })).json()] as Stage]
      : []),
    [
      'engine (client, JSONCompactEachRow, .json())',
      async () => (await raw.query({ query: compiled.sql, query_params: compiled.params, format: 'JSONCompactEachRow' })).json(),
    ],
    [
      'queryClickhouse (limits, gate, row reader)',
      () => queryClickhouse(ch, { kind: 'bench', teamId: 1, sql: compiled.sql, params: compiled.params, format: 'JSONCompactEachRowWithNamesAndTypes' }),
    ],
    [
      'parse (cached) + compile',
      async () => compileSelect(await compiler.parseSelect(HOGQL), { teamId: 1, text: HOGQL, limits: { default: 100, max: 50_000 } }),
    ],
    [
      'query service runNode (all of the above and its own)',
      () => service.runNode(project, { kind: 'HogQLQuery', query: HOGQL }, Date.now(), { refresh: true }),
    ],
    ['project read (metadata store)', () => findProjectById(db, 1)],
    ['POST /query/ over HTTP (everything)', () => postQuery(base)],
    ['GET /_health over HTTP', async () => (await fetch(`${base}/_health`)).text()],
    ['POST /query/ over HTTP, the project read per request', () => postQuery(`http://127.0.0.1:${uncached.port}`)],
    ['POST /query/ over HTTP through Express (no fast path)', () => postQuery(`http://127.0.0.1:${expressServer.port}`)],
    [
      'queryClickhouse, the answer canned (JS only)',
      () => queryClickhouse(cannedCh, { kind: 'bench', teamId: 1, sql: compiled.sql, params: compiled.params, format: 'JSONCompactEachRowWithNamesAndTypes' }),
    ],
    [
      'query service runNode, the answer canned (JS only)',
      () => cannedService.runNode(project, { kind: 'HogQLQuery', query: HOGQL }, Date.now(), { refresh: true }),
    ],
  ];
  const only = process.env['PROBE_ONLY'];
  if (only) {
    for (const [name, fn] of stages.filter(([name]) => name.includes(only))) {
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < N * ROUNDS; i++) await fn();
      const c = process.cpuUsage(cpu0);
      console.log(`${name}: ${((c.user + c.system) / 1000 / N / ROUNDS).toFixed(3)} ms CPU per call`);
    }
  } else await attribute(stages);
  await compiler.close();
  await server.close();
  await uncached.close();
  await expressServer.close();
  await stores.close();
}
type Stage = [string, () => Promise<unknown>];

/** Times each stage in rounds that alternate them, then prints each and the differences between them. */
async function attribute(stages: Stage[]): Promise<void> {
  for (const [, fn] of stages) for (let i = 0; i < 30; i++) await fn();
  const cpu = new Map<string, number[]>();
  const wall = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++)
    for (const [name, fn] of stages) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      for (let i = 0; i < N; i++) await fn();
      const c = process.cpuUsage(cpu0);
      (wall.get(name) ?? wall.set(name, []).get(name)!).push((performance.now() - t0) / N);
      (cpu.get(name) ?? cpu.set(name, []).get(name)!).push((c.user + c.system) / 1000 / N);
    }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const m = (name: string) => ({ cpu: med(cpu.get(name)!), wall: med(wall.get(name)!) });
  console.log(`${HOGQL}: medians of ${ROUNDS} rounds of ${N}, ms per call (CPU of every thread / wall)`);
  for (const [name] of stages) console.log(`  ${name.padEnd(56)} ${m(name).cpu.toFixed(3)} / ${m(name).wall.toFixed(3)}`);
  const [engine, client, compile, svc, projectRead, http, health, httpUncached, httpExpress, cannedClient, cannedService] = stages
    .slice(BASELINE ? 1 : 0)
    .map(([name]) => m(name));
  const diff = (a: { cpu: number; wall: number }, ...bs: { cpu: number; wall: number }[]) =>
    `${(a.cpu - bs.reduce((s, b) => s + b.cpu, 0)).toFixed(3)} / ${(a.wall - bs.reduce((s, b) => s + b.wall, 0)).toFixed(3)}`;
  console.log('attribution of the request (CPU / wall ms):');
  console.log(`  engine                                    ${engine!.cpu.toFixed(3)} / ${engine!.wall.toFixed(3)}`);
  console.log(`  queryClickhouse over the engine           ${diff(client!, engine!)}`);
  console.log(`  parse (cached) + compile                  ${compile!.cpu.toFixed(3)} / ${compile!.wall.toFixed(3)}`);
  console.log(`  query service + runner over those         ${diff(svc!, client!, compile!)}`);
  console.log(
    `  HTTP, auth, routing, answer over service  ${diff(http!, svc!)} (of which a bare HTTP request: ${health!.cpu.toFixed(3)} / ${health!.wall.toFixed(3)})`,
  );
  // The request reads the project from the process's project cache (3 s): this is what a read costs when it misses.
  console.log(
    `  (a project read from the metadata store, ${projectRead!.cpu.toFixed(3)} / ${projectRead!.wall.toFixed(3)}: once per 3 s, from the project cache)`,
  );
  console.log(`what the project cache saves a request (the same request, the project read per request): ${diff(httpUncached!, http!)}`);
  console.log(
    `JavaScript alone, the answer canned: queryClickhouse ${cannedClient!.cpu.toFixed(3)} / ${cannedClient!.wall.toFixed(3)}, query service runNode ${cannedService!.cpu.toFixed(3)} / ${cannedService!.wall.toFixed(3)}`,
  );
  if (BASELINE) console.log(`endpoint / hand-written SQL (wall): ${(http!.wall / m(stages[0]![0]).wall).toFixed(2)}`);
  console.log(`what answering before Express saves a request (the same request through Express's routers): ${diff(httpExpress!, http!)}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
