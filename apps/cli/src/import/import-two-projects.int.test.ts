/**
 * One export imported into two projects (a staging project, then production) must land in both:
 * the same event uuids in another project are other events, not a retry of the first insert.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedSightline, stopStartedProcesses, waitFor, type EmbeddedSightline } from '@sightline/testkit';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const PROJECT_KEY = 'phc_two_projects_first_key';
const PERSONAL_KEY = 'phx_two_projects_personal_key';
const EVENTS = 400;

function runImport(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', 'import', ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

describe('sightline import of one file into two projects', () => {
  let service: EmbeddedSightline;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-two-projects-'));
    service = await startEmbeddedSightline({ dataDir, projectApiKey: PROJECT_KEY, personalApiKey: PERSONAL_KEY });
  });
  afterAll(async () => {
    await stopStartedProcesses();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const api = async (method: string, url: string, body?: unknown) => {
    const response = await fetch(`${service.base}${url}`, {
      method,
      headers: { Authorization: `Bearer ${PERSONAL_KEY}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const importedCount = async (projectId: number) => {
    const { status, body } = await api('POST', `/api/environments/${projectId}/insights/trend/`, {
      events: [{ id: 'migrated', math: 'total' }],
      date_from: '2024-03-01',
      date_to: '2024-03-03',
      refresh: true,
    });
    if (status !== 200) throw new Error(`trend of project ${projectId}: ${status} ${JSON.stringify(body)}`);
    return (body['result'] as { count: number }[])[0]!.count;
  };

  it('stores every event in both projects', async () => {
    const created = await api('POST', '/api/projects/', { name: 'production' });
    expect(created.status).toBe(201);
    const second = { id: created.body['id'] as number, key: created.body['api_token'] as string };

    // Explicit uuids, as a PostHog export carries them: the same rows go to both projects.
    const file = path.join(dataDir, 'export.jsonl');
    const lines = Array.from({ length: EVENTS }, (_, i) =>
      JSON.stringify({
        uuid: `0190a6f0-0000-7000-8000-${String(i).padStart(12, '0')}`,
        event: 'migrated',
        distinct_id: `user-${i % 40}`,
        timestamp: `2024-03-02T10:${String(i % 60).padStart(2, '0')}:00Z`,
        properties: { i },
      }),
    );
    fs.writeFileSync(file, lines.join('\n') + '\n');

    for (const key of [PROJECT_KEY, second.key]) {
      const run = await runImport([file, '--host', service.base, '--api-key', key]);
      expect([run.code, run.stderr]).toEqual([0, expect.any(String)]);
    }
    await waitFor(async () => expect([await importedCount(1), await importedCount(second.id)]).toEqual([EVENTS, EVENTS]), {
      timeoutMs: 30_000,
      intervalMs: 1000,
      description: 'the export in both projects',
    });
  });
});
