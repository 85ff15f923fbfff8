/**
 * The fixed cost of an authenticated project request on the embedded stores (PGlite, chdb): CPU
 * per GET /api/projects/1/ with a personal key, with the principal cache and with the key looked
 * up per request (principalCacheMaxAgeMs 0), against /_health; the metadata-store statements one
 * such request runs; and the cost of each statement alone. process.cpuUsage counts every thread
 * (PGlite's included), so the figure is the whole cost of a request.
 *
 *   node --import tsx bench/api-auth-cpu.ts     (PROBE_N requests per round, default 200; PROBE_PATH, PROBE_BODY)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootstrapInstance } from '@sightline/accounts';
import { createApiApp } from '@sightline/api';
import { createAnalyticsStore, migrateClickHouse } from '@sightline/clickhouse';
import { listen } from '@sightline/http';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';

const KEY = 'phx_bench_auth_personal_key';
async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sightline-bench-auth-'));
  const db = await createMetadataStore({ dataDir: dir });
  await migratePostgres(db);
  await bootstrapInstance(db, { personalApiKey: KEY });
  const ch = createAnalyticsStore({ dataDir: dir, user: 'default', password: '', database: 'default' });
  await migrateClickHouse(ch);
  // PROBE_BODY: POST it (JSON) instead of a GET, e.g. a query to /api/projects/1/query/.
  const body = process.env['PROBE_BODY'];
  const requestInit: RequestInit = body
    ? { method: 'POST', body, headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' } }
    : { headers: { Authorization: `Bearer ${KEY}` } };
  const seen: string[] = [];
  let count = false;
  type AnyFunction = (...args: unknown[]) => unknown;
  // Records the statements of one request: every query, through any priority view of the store.
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, p, r) {
        const v = Reflect.get(t, p, r);
        if (p === 'query')
          return (text: string, ...rest: unknown[]) => {
            if (count) seen.push(text.replace(/\s+/g, ' ').slice(0, 140));
            return (v as AnyFunction).call(t, text, ...rest);
          };
        if (p === 'withPriority' && typeof v === 'function') return (...a: unknown[]) => wrap((v as AnyFunction).apply(t, a) as object);
        return typeof v === 'function' ? v.bind(t) : v;
      },
    });
  const appWithCache = (principalCacheMaxAgeMs?: number) =>
    createApiApp({
      principalCacheMaxAgeMs,
      db: wrap(db),
      ch,
      logger: silentLogger(),
      metrics: createMetrics(),
      now: () => Date.now(),
      readiness: [],
      isShuttingDown: () => false,
      insightCacheTtlMs: 0,
    });
  const server = await listen(appWithCache(), { host: '127.0.0.1', port: 0 });
  const uncached = await listen(appWithCache(0), { host: '127.0.0.1', port: 0 });
  const getFrom = (port: number) => async () => {
    const r = await fetch(`http://127.0.0.1:${port}${process.env.PROBE_PATH ?? '/api/projects/1/'}`, requestInit);
    await r.text();
    if (r.status !== 200) throw new Error(String(r.status));
  };
  const url = `http://127.0.0.1:${server.port}${process.env.PROBE_PATH ?? '/api/projects/1/'}`;
  const get = async () => {
    const r = await fetch(url, requestInit);
    await r.text();
    if (r.status !== 200) throw new Error(String(r.status));
  };
  const health = async () => {
    const r = await fetch(`http://127.0.0.1:${server.port}/_health`);
    await r.text();
  };
  for (let i = 0; i < 50; i++) await get();
  count = true;
  await get();
  count = false;
  console.log(`statements per request: ${seen.length}`);
  for (const s of seen) console.log('  ', s);
  const N = Number(process.env.PROBE_N ?? 200);
  const rounds: Record<string, number[]> = {};
  for (let round = 0; round < 7; round++)
    for (const [name, fn] of [
      ['/_health', health],
      ['project GET, key looked up per request', getFrom(uncached.port)],
      ['project GET, principal cache', get],
    ] as const) {
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < N; i++) await fn();
      const c = process.cpuUsage(cpu0);
      (rounds[name] ??= []).push((c.user + c.system) / 1000 / N);
    }
  for (const [name, xs] of Object.entries(rounds))
    console.log(`${name}: median ${xs.sort((a, b) => a - b)[3]!.toFixed(3)} ms CPU per request (${xs.map((x) => x.toFixed(2)).join(' ')})`);
  const { findPrincipalByKeyHash, findProjectById } = await import('@sightline/accounts');
  const { hashPersonalApiKey } = await import('@sightline/auth');
  const bg = db.withPriority?.('background') ?? db;
  const h = hashPersonalApiKey(KEY);
  for (const [name, fn] of [
    ['SELECT 1', () => bg.query('SELECT 1')],
    ['key lookup', () => findPrincipalByKeyHash(bg, h)],
    ['project lookup', () => findProjectById(bg, 1)],
    ['hash', async () => hashPersonalApiKey(KEY)],
  ] as const) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await fn();
    const c = process.cpuUsage(cpu0);
    console.log(`${name}: ${((performance.now() - t0) / N).toFixed(3)} ms wall, ${((c.user + c.system) / 1000 / N).toFixed(3)} ms CPU`);
  }
  await server.close();
  await uncached.close();
  await ch.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
