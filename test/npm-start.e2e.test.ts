// `npm start` as users run it: the all-in-one service from its compiled bundle
// (scripts/run-compiled.cjs), not the sources through tsx as the other end-to-end tests run it.
// What a bundle could get wrong: files read beside the sources (migrations of both stores, the
// web app's build, the API document's page, posthog-js), a workspace's own copy of a package,
// and the HogQL parser's worker thread. One first start on an empty data directory, driven over HTTP.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedSightline, waitFor, type EmbeddedSightline } from '@sightline/testkit';

const PROJECT_KEY = 'phc_npm_start_project_key';
const PERSONAL_KEY = 'phx_npm_start_personal_key';

let dataDir: string;
let service: EmbeddedSightline;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-npm-start-'));
  service = await startEmbeddedSightline({ dataDir, projectApiKey: PROJECT_KEY, personalApiKey: PERSONAL_KEY, npmStart: true });
  console.log(`npm start (compiled) first start: listening after ${service.startupMs} ms from spawn`);
});

afterAll(async () => {
  await service?.app.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const api = (pathAndQuery: string, init: RequestInit = {}) =>
  fetch(`${service.base}${pathAndQuery}`, {
    ...init,
    headers: { Authorization: `Bearer ${PERSONAL_KEY}`, 'Content-Type': 'application/json', ...init.headers },
  });

it('runs from the compiled bundle', () => {
  expect(service.app.proc.spawnargs.join(' ')).toContain('scripts/run-compiled.cjs apps/all-in-one/src/main.ts');
  expect(service.app.output()).not.toContain('running it through tsx');
});

it('captures an event and answers it back through the events list and a HogQL breakdown', async () => {
  const capture = await fetch(`${service.base}/capture/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ api_key: PROJECT_KEY, event: 'npm start smoke', distinct_id: 'user-1', properties: { plan: 'pro' } }),
  });
  expect([capture.status, await capture.json()]).toEqual([200, { status: 1 }]);

  const listed = await waitFor(
    async () => {
      const body = (await (await api(`/api/projects/1/events/?event=${encodeURIComponent('npm start smoke')}`)).json()) as {
        results: { distinct_id: string }[];
      };
      return body.results.length > 0 && body.results;
    },
    { timeoutMs: 30_000, description: 'the captured event in the events list' },
  );
  expect(listed.map((event) => event.distinct_id)).toEqual(['user-1']);

  const trend = await api('/api/projects/1/query/', {
    method: 'POST',
    body: JSON.stringify({
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: 'npm start smoke', math: 'total' }],
        breakdownFilter: { breakdown: "concat(properties.plan, '!')", breakdown_type: 'hogql' },
      },
    }),
  });
  expect(trend.status).toBe(200);
  const results = ((await trend.json()) as { results: { breakdown_value: unknown; count: number }[] }).results;
  expect(results.map((r) => [r.breakdown_value, r.count])).toEqual([['pro!', 1]]);
});

it('validates a management body against its declared schema', async () => {
  const missing = await api('/api/personal_api_keys/', { method: 'POST', body: JSON.stringify({ scopes: ['*'] }) });
  expect([missing.status, await missing.json()]).toEqual([
    400,
    { type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'label' },
  ]);
});

it('serves the web app, the API document page and posthog-js from their package files', async () => {
  const page = await fetch(`${service.base}/`);
  expect([page.status, page.headers.get('content-type')]).toEqual([200, expect.stringMatching(/text\/html/)]);
  const swagger = await fetch(`${service.base}/api/schema/docs/swagger-ui-bundle.js`);
  expect(swagger.status).toBe(200);
  const sdk = await fetch(`${service.base}/static/array.js`);
  expect([sdk.status, (await sdk.text()).includes('posthog')]).toEqual([200, true]);
});
