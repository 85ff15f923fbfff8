import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSightline, type EmbeddedSightline } from './embedded-sightline';
import { requestJson } from './http-json';
import { createTestStores, type TestStores } from './test-stores';
import { waitFor } from '@sightline/local-services';

export interface StoredEvent {
  uuid: string;
  event: string;
  distinct_id: string;
  person_id: string;
  properties: Record<string, any>;
  elements_chain: string;
  /**
   * Rows with this uuid as queries see them (FINAL): 1 when the event counts once. An SDK may
   * send an event again with the same uuid (posthog-js retries a request cut off by navigation
   * from its unload beacon); the copies collapse by uuid, as PostHog deduplicates them.
   */
  copies: number;
}

export interface StoredPerson {
  uuid: string;
  properties: Record<string, any>;
  is_identified: boolean;
  distinct_ids: string[];
}

/** The service an SDK test points its client at: `npm start`'s app as a real process. */
export interface SdkTarget {
  /** `http://127.0.0.1:<port>`: the SDK's host. */
  base: string;
  projectKey: string;
  personalKey: string;
  stores: TestStores;
  /** A management-API call with the personal key; the body JSON-encoded. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Every stored event of project 1 (all copies folded into one row with `copies`). */
  events(): Promise<StoredEvent[]>;
  /** Waits until every given uuid is stored, then answers the project's events. */
  eventsOnceStored(uuids: Iterable<string>, timeoutMs?: number): Promise<StoredEvent[]>;
  /** Everything the service printed so far (its start banner, logs). */
  output(): string;
  /** The person a distinct id belongs to, read through the persons API, or null. */
  person(distinctId: string): Promise<StoredPerson | null>;
  close(): Promise<void>;
}

/**
 * The all-in-one service (gateway, worker and api on one port, in-process bus) on fresh
 * PostgreSQL and ClickHouse databases, so a test reads back exactly what the SDK's requests
 * stored: ClickHouse events by uuid (no API lists single events yet) and persons through the persons API.
 */
export async function startSdkTarget(prefix: string): Promise<SdkTarget> {
  const projectKey = `phc_${prefix}_project_key`;
  const personalKey = `phx_${prefix}_personal_key`;
  const stores = await createTestStores(prefix, { projectApiKey: projectKey, personalApiKey: personalKey });
  const dataDir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  let service: EmbeddedSightline;
  try {
    service = await startEmbeddedSightline({
      dataDir,
      projectApiKey: projectKey,
      personalApiKey: personalKey,
      stores: { postgresUrl: stores.postgresUrl, clickhouseUrl: stores.clickhouseUrl, clickhouseDatabase: stores.clickhouseDatabase },
    });
  } catch (error) {
    await stores.close();
    throw error;
  }

  const events = async (): Promise<StoredEvent[]> => {
    const rows = await (
      await stores.ch.query({
        query: `SELECT toString(uuid) AS uuid, any(event) AS event, any(distinct_id) AS distinct_id, toString(any(person_id)) AS person_id,
                       any(properties) AS properties, any(elements_chain) AS elements_chain, count() AS copies
                  FROM events FINAL WHERE team_id = 1 GROUP BY uuid ORDER BY min(timestamp)`,
        format: 'JSONEachRow',
      })
    ).json<Omit<StoredEvent, 'properties' | 'copies'> & { properties: string; copies: string | number }>();
    return rows.map((r) => ({ ...r, properties: JSON.parse(r.properties) as Record<string, any>, copies: Number(r.copies) }));
  };

  return {
    base: service.base,
    projectKey,
    personalKey,
    stores,
    api: (method, path, body) =>
      requestJson(`${service.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${personalKey}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    events,
    output: () => service.app.output(),
    async eventsOnceStored(uuids, timeoutMs = 30_000) {
      const wanted = [...uuids];
      let last: StoredEvent[] = [];
      await waitFor(
        async () => {
          last = await events();
          const stored = new Set(last.map((e) => e.uuid));
          return wanted.every((u) => stored.has(u));
        },
        { timeoutMs, intervalMs: 250, description: `${wanted.length} events stored` },
      );
      return last;
    },
    async person(distinctId) {
      // Read back as a user would: the persons API.
      const response = await fetch(`${service.base}/api/environments/1/persons/?distinct_id=${encodeURIComponent(distinctId)}`, {
        headers: { authorization: `Bearer ${personalKey}` },
      });
      if (response.status !== 200) throw new Error(`persons API answered ${response.status}: ${await response.text()}`);
      const page = (await response.json()) as { results: StoredPerson[] };
      return page.results[0] ?? null;
    },
    async close() {
      await service.app.stop();
      await stores.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
