/**
 * The persons batch's PostgreSQL work alone: PostgreSQL backend CPU per 1,000 persons, by
 * statement, for runs that create persons and runs that update them (no bus, no ClickHouse,
 * no enrichment). The backend's CPU is read from /proc/<pid>/schedstat (Linux), so the figures
 * hold up on a machine other work is loading, where wall-clock rates do not.
 *
 *   node --import tsx bench/persons-pg.ts
 *   BENCH_BATCH=2000 node --import tsx bench/persons-pg.ts   (persons per run; default 5,000)
 *   BENCH_LOCK=1 node --import tsx bench/persons-pg.ts       (read locked, as a run with merges does)
 *   BENCH_RAW=1 node --import tsx bench/persons-pg.ts        (bench:worker's raw baseline writes instead)
 *   BENCH_KEPT=1 node --import tsx bench/persons-pg.ts       (persons committed by an earlier run are kept, not read, as the worker does)
 *
 * Each of 100,000 distinct ids gets one event per phase: `create` makes its person, `update` and
 * `update again` change it with a $set, in runs of BENCH_BATCH, each run one transaction
 * (PersonBatch.load, the events applied in memory, PersonBatch.flush), as the worker's persons
 * step does. The commit is not counted.
 */
import fs from 'node:fs';
import os from 'node:os';
import { bootstrapInstance } from '@sightline/accounts';
import { personUuidFor } from '@sightline/ingestion';
import { applyPropertyUpdates, PersonBatch, personUpdatesFromEvent, WrittenPersons } from '@sightline/persons';
import { createMetadataStore, migratePostgres, type Sql } from '@sightline/postgres';
import { startPostgres } from '@sightline/local-services';
import { createBenchLauncher } from './bench-launcher';

const IDS = 100_000;
const BATCH = Number(process.env.BENCH_BATCH ?? 5000);
const LOCK = process.env.BENCH_LOCK === '1';
const PHASES = ['create', 'update', 'update again'];
/** BENCH_RAW=1: the same person rows written as bench:worker's raw PostgreSQL baseline writes them. */
const RAW = process.env.BENCH_RAW === '1';
/** BENCH_KEPT=1: the worker's memory of the persons it committed (WrittenPersons), so an update reads none. */
const KEPT = process.env.BENCH_KEPT === '1' ? new WrittenPersons() : undefined;
/** Uuid and PostgreSQL id of each person the raw writes made. */
const rawPersons = new Map<string, { uuid: string; id?: string }>();

/**
 * bench:worker's raw PostgreSQL write of one run (bench/worker.ts rawPersonWrites): the final
 * rows worked out beforehand (not counted), then one unnest upsert of the persons and one unnest
 * insert of the new distinct ids. Answers the backend's CPU (ns) for the two statements.
 */
async function rawWrite(sql: Sql, pid: number, ids: string[], phase: string, nowMs: number): Promise<number> {
  const created = ids.filter((id) => !rawPersons.has(id));
  for (const id of created) rawPersons.set(id, { uuid: personUuidFor(1, id) });
  // The properties the worker's person ends with (lifted $current_url and its $initial_ copy included).
  const person: Record<string, unknown> = {};
  applyPropertyUpdates(person, personUpdatesFromEvent({ $set: { plan: phase, seen: nowMs }, $current_url: 'https://example.com/pricing' }));
  const properties = JSON.stringify(process.env.BENCH_RAW_SET_ONLY === '1' ? { plan: phase, seen: nowMs } : person);
  const before = cpuNs(pid);
  const rows = await sql.query<{ id: string; uuid: string }>(
    `INSERT INTO persons (team_id, uuid, properties, version, created_at)
     SELECT 1, u, p::jsonb, v, c FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::timestamptz[]) AS x(u, p, v, c)
     ON CONFLICT (team_id, uuid) DO UPDATE SET properties = EXCLUDED.properties, version = EXCLUDED.version
     RETURNING id::text AS id, uuid::text AS uuid`,
    [ids.map((id) => rawPersons.get(id)!.uuid), ids.map(() => properties), ids.map(() => PHASES.indexOf(phase)), ids.map(() => new Date(nowMs).toISOString())],
  );
  const byUuid = new Map(rows.map((r) => [r.uuid, r.id]));
  if (created.length > 0)
    await sql.query(`INSERT INTO person_distinct_ids (team_id, distinct_id, person_id) SELECT 1, * FROM unnest($1::text[], $2::bigint[])`, [
      created,
      created.map((id) => byUuid.get(rawPersons.get(id)!.uuid)),
    ]);
  return cpuNs(pid) - before;
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

/** CPU time (ns) a process has run (Linux schedstat). */
const cpuNs = (pid: number) => Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);

/** The statement a query is, by its text. */
function statementOf(text: string): string {
  if (text.includes('JOIN persons p ON p.id = d.person_id')) return 'read persons';
  if (text.includes("'personless' AS kind")) return 'read new-person versions';
  if (text.includes('ON CONFLICT (team_id, uuid)')) return 'raw: upsert persons';
  if (text.includes('INSERT INTO persons') || text.includes('UPDATE persons')) return 'write persons and distinct ids';
  if (text.includes('INSERT INTO person_distinct_ids')) return RAW ? 'raw: insert distinct ids' : 'insert distinct ids';
  return text.replace(/\s+/g, ' ').slice(0, 40);
}

async function main() {
  const services = createBenchLauncher('persons-pg');
  const { launcher } = services;
  try {
    const { postgresAdminUrl } = await startPostgres(launcher);
    const admin = await createMetadataStore({ url: postgresAdminUrl });
    await admin.query('CREATE DATABASE bench_persons');
    await admin.close();
    const url = new URL(postgresAdminUrl);
    url.pathname = '/bench_persons';
    const db = await createMetadataStore({ url: url.toString() });
    await migratePostgres(db);
    await bootstrapInstance(db, { projectApiKey: 'phc_bench_persons_pg' });
    console.log(
      `persons PostgreSQL bench: ${IDS.toLocaleString('en-US')} persons, runs of ${BATCH.toLocaleString('en-US')}, ${RAW ? 'raw baseline writes, ' : ''}${LOCK ? 'locked' : 'unlocked'} reads${KEPT ? ', committed persons kept' : ''}, load average ${os.loadavg()[0]!.toFixed(1)}`,
    );
    const byStatement = new Map<string, { ns: number; n: number }>();
    let nowMs = Date.parse('2026-01-01T00:00:00Z');
    const nodeBefore = process.cpuUsage();
    for (const phase of PHASES) {
      const started = performance.now();
      const nodePhaseBefore = process.cpuUsage();
      let phaseNs = 0;
      for (let start = 0; start < IDS; start += BATCH) {
        const committed = await db.transaction(async (tx) => {
          const [{ pid } = { pid: 0 }] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          const measured: Sql = {
            query: async (text, params, options) => {
              const before = cpuNs(pid);
              const rows = await tx.query(text, params, options);
              const key = `${phase}: ${statementOf(text)}`;
              const entry = byStatement.get(key) ?? { ns: 0, n: 0 };
              entry.ns += cpuNs(pid) - before;
              entry.n++;
              byStatement.set(key, entry);
              return rows as never;
            },
            exec: (script) => tx.exec(script),
          };
          const ids = Array.from({ length: BATCH }, (_, i) => `bench-${start + i}`);
          if (RAW) {
            phaseNs += await rawWrite(measured, pid, ids, phase, nowMs);
            nowMs += BATCH;
            return null;
          }
          const before = cpuNs(pid);
          const batch = await PersonBatch.load(measured, new Map([[1, ids]]), { lock: LOCK, remembered: KEPT });
          for (const id of ids) {
            const person = batch.getOrCreate(1, id, nowMs++);
            batch.updateProperties(person, personUpdatesFromEvent({ $set: { plan: phase, seen: nowMs }, $current_url: 'https://example.com/pricing' }));
            batch.propertiesJson(person);
          }
          await batch.flush(measured);
          phaseNs += cpuNs(pid) - before;
          return batch;
        });
        if (KEPT) committed?.rememberIn(KEPT);
      }
      const perThousand = IDS / 1000;
      console.log(
        `${phase.padEnd(13)} PostgreSQL backend ${(phaseNs / 1e6 / perThousand).toFixed(1)} ms CPU per 1,000 persons, this process ${(cpuMs(process.cpuUsage(nodePhaseBefore)) / perThousand).toFixed(1)}, wall ${((performance.now() - started) / perThousand).toFixed(1)} ms`,
      );
    }
    for (const [key, { ns, n }] of byStatement)
      console.log(`  ${key.padEnd(50)} ${(ns / 1e6 / (IDS / 1000)).toFixed(2)} ms per 1,000 persons (${n} statements)`);
    const node = process.cpuUsage(nodeBefore);
    console.log(`this process: ${((node.user + node.system) / 1000 / ((PHASES.length * IDS) / 1000)).toFixed(1)} ms CPU per 1,000 person updates`);
    await db.close();
  } finally {
    await services.stopAll(500);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
