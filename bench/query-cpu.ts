/**
 * Where the fixed cost of POST /api/projects/1/query/ goes, on the embedded stores (PGlite, chdb):
 * the same `SELECT 1` (or PROBE_QUERY) timed at each stage of the request path, each stage
 * alone, so the differences attribute the cost: the engine through the client; queryClickhouse
 * (the limits as settings, the read gate, the row reader); the parse (a cached text) and
 * compile; the query service (project settings, preparation, answer cache, metric, size bound,
 * the answer's shape); and the whole request over HTTP (the key's principal and the project from
 * their caches, routing, the body, the throttle, the JSON answer). A project read from the
 * metadata store is timed too: what the project cache saves.
 * process.cpuUsage counts every thread (PGlite's and chdb's included).
 *
 *   node --import tsx bench/query-cpu.ts     (PROBE_N requests per round, default 200; PROBE_QUERY)
 *   PROBE_ONLY=HTTP node --cpu-prof --import tsx bench/query-cpu.ts   (times only the stages whose name holds it: a profile of one stage)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootstrapInstance, findProjectById } from '@sightline/accounts';
import { createApiApp } from '@sightline/api';
import { boundAnalyticsReads, createAnalyticsStore, DEFAULT_ANALYTICS_QUERY_LIMITS, migrateClickHouse, queryClickhouse } from '@sightline/clickhouse';
import { compileSelect, createHogQLCompiler } from '@sightline/hogql';
import { listen, nextWorkTurn } from '@sightline/http';
import { createQueryService } from '@sightline/insights';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';

const KEY = 'phx_bench_query_personal_key';
const HOGQL = process.env['PROBE_QUERY'] ?? 'SELECT 1';
const N = Number(process.env['PROBE_N'] ?? 200);
const ROUNDS = 5;

async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-query-'));
  const db = await createMetadataStore({ dataDir: dir });
  await migratePostgres(db);
  await bootstrapInstance(db, { personalApiKey: KEY });
  const raw = createAnalyticsStore({ dataDir: dir, user: 'default', password: '', database: 'default' });
  await migrateClickHouse(raw);
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

  const stages: Stage[] = [
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
  await raw.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
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
  const [engine, client, compile, svc, projectRead, http, health, httpUncached] = stages.map(([name]) => m(name));
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
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
