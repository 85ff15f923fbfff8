/**
 * One server of the decide benchmark, in its own process. Modes:
 *   api      the real api app (Express, body decoding, the stored person cache as `npm start` and
 *            the api app wire it (FLAGS_PERSON_CACHE_MS, default 1 s), Postgres reads, engine)
 *   api-uncached  the same without the person cache (a store read on every request)
 *   ceiling  plain node:http + JSON.parse + the engine on the same definitions, with the
 *            stored persons and groups held in memory: the most a decide endpoint can do here
 * Prints "LISTENING <port>" once ready.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAnalyticsStore } from '@sightline/clickhouse';
import { createApiApp, flagsResponseText, flagsShape, readFlagRequest } from '@sightline/api';
import { createInMemoryInvalidation } from '@sightline/bus';
import { createFlagDefinitionsCache, loadProjectFlagDefinitions } from '@sightline/flag-store';
import { evaluateFlags } from '@sightline/flags';
import { openGeoIp } from '@sightline/geoip';
import { clientIp, listen } from '@sightline/http';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { flagEvaluationEnv } from '@sightline/config';
import { createDecidePersonCache } from '@sightline/persons';
import { createMetadataStore } from '@sightline/postgres';

// Exit on SIGTERM through process.exit, so --cpu-prof profiles get written.
process.on('SIGTERM', () => process.exit(0));

async function main() {
  const [mode, databaseUrl, teamIdText] = process.argv.slice(2) as [string, string, string];
  const teamId = Number(teamIdText);
  const db = await createMetadataStore({ url: databaseUrl });
  const geoip = await openGeoIp();
  if (mode === 'api' || mode === 'api-uncached') {
    const app = createApiApp({
      db,
      ch: createAnalyticsStore({ url: 'http://127.0.0.1:1', user: 'default', password: '', database: 'default' }),
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      geoip,
      flagDefinitions: createFlagDefinitionsCache({ db, channel: createInMemoryInvalidation() }),
      decidePersons: createDecidePersonCache({
        channel: createInMemoryInvalidation(),
        maxAgeMs: mode === 'api-uncached' ? 0 : Number(process.env['FLAGS_PERSON_CACHE_MS'] ?? flagEvaluationEnv.FLAGS_PERSON_CACHE_MS.default),
      }),
    });
    const server = await listen(app, { host: '127.0.0.1', port: 0 });
    process.stdout.write(`LISTENING ${server.port}\n`);
    return;
  }
  const definitions = await loadProjectFlagDefinitions(db, teamId);
  const persons = new Map<string, { properties: Record<string, unknown>; cohorts: Set<number> }>();
  const rows = await db.query<{ distinct_id: string; properties: Record<string, unknown>; cohorts: number[] }>(
    `SELECT d.distinct_id, p.properties, ARRAY(SELECT cohort_id FROM cohort_people c WHERE c.person_id = p.id) AS cohorts
       FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id WHERE d.team_id = $1`,
    [teamId],
  );
  for (const row of rows) persons.set(row.distinct_id, { properties: row.properties, cohorts: new Set(row.cohorts.map(Number)) });
  const groups = new Map(
    (
      await db.query<{ group_key: string; group_properties: Record<string, unknown> }>('SELECT group_key, group_properties FROM groups WHERE team_id = $1', [
        teamId,
      ])
    ).map((g) => [g.group_key, g.group_properties]),
  );
  await db.close();
  const choice = flagsShape({ v: '2' });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = readFlagRequest(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      const stored = persons.get(request.distinctId);
      const company = typeof request.groups['company'] === 'string' ? request.groups['company'] : null;
      const results = evaluateFlags(definitions.flags, {
        distinctId: request.distinctId,
        personProperties: {
          ...(stored?.properties ?? {}),
          distinct_id: request.distinctId,
          ...geoip.lookup(clientIp(req) ?? ''),
          ...request.personProperties,
        },
        groups: request.groups,
        groupProperties: company ? { company: { $group_key: company, ...(groups.get(company) ?? {}) } } : {},
        groupTypeNames: definitions.groupTypeNames,
        cohorts: definitions.cohorts,
        staticCohortIds: stored?.cohorts ?? new Set(),
        hashKeyOverrides: {},
        now: new Date(),
      });
      const body = flagsResponseText(results, false, choice);
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`LISTENING ${(server.address() as AddressInfo).port}\n`));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
