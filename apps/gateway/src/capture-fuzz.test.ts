/**
 * Property-based fuzzing of capture bodies (fast-check): whatever the bytes, content type,
 * encoding hint or route, the gateway answers with a non-5xx status, every error body is the
 * JSON DRF envelope, and the process keeps serving.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import LZString from 'lz-string';
import { hostileBodies } from '@sightline/testkit';
import { CAPTURE_ROUTES } from './capture.route';
import { jsonBody, rawRequest, startTestGateway, TEST_TOKEN, type TestGateway } from './test-support';

/** Thousands in CI; FUZZ_RUNS raises it for a longer local search. */
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 3000);

const eventArb = fc.record(
  {
    event: fc.oneof(fc.string(), fc.constantFrom('$pageview', '$identify', '$create_alias'), fc.constant(null), fc.integer()),
    distinct_id: fc.oneof(fc.string(), fc.integer(), fc.constant(''), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.object({ maxDepth: 1 })),
    properties: fc.oneof(fc.object({ maxDepth: 2 }), fc.constant(null), fc.string(), fc.array(fc.integer())),
    timestamp: fc.oneof(
      fc.string(),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      fc.integer(),
      fc.double(),
    ),
    offset: fc.oneof(fc.integer(), fc.double(), fc.string()),
    uuid: fc.oneof(fc.uuid(), fc.string()),
    token: fc.oneof(fc.constant(TEST_TOKEN), fc.string()),
  },
  { requiredKeys: [] },
);

/** Bodies from structured (mostly valid) to arbitrary bytes. */
const jsonTextArb = fc.oneof(
  eventArb.map((e) => JSON.stringify({ api_key: TEST_TOKEN, ...e })),
  fc.array(eventArb, { maxLength: 20 }).map((batch) => JSON.stringify({ api_key: TEST_TOKEN, batch, sent_at: new Date().toISOString() })),
  fc.array(eventArb, { maxLength: 5 }).map((events) => JSON.stringify(events)),
  fc
    .record({ api_key: fc.oneof(fc.string(), fc.constant(TEST_TOKEN)), batch: fc.anything(), historical_migration: fc.anything() })
    .map((b) => JSON.stringify(b)),
  fc.json(),
  fc.string(),
  // Hostile values (deep nesting, NULs, lone surrogates, huge numbers, megabyte strings) at any
  // place of a valid batch.
  hostileBodies({ api_key: TEST_TOKEN, batch: [{ event: 'e', distinct_id: 'u', timestamp: '2024-01-01T00:00:00Z', properties: { plan: 'pro', n: 1 } }] }),
);

const bodyArb = fc.oneof(
  jsonTextArb.map((text) => ({ body: Buffer.from(text), hint: null as string | null })),
  jsonTextArb.map((text) => ({ body: gzipSync(text), hint: null })),
  jsonTextArb.map((text) => ({ body: gzipSync(text), hint: 'gzip-js' })),
  jsonTextArb.map((text) => ({ body: Buffer.from(`data=${encodeURIComponent(Buffer.from(text).toString('base64'))}`), hint: 'base64' })),
  jsonTextArb.map((text) => ({ body: Buffer.from(LZString.compressToBase64(text)), hint: 'lz64' })),
  fc.uint8Array({ maxLength: 2048 }).map((bytes) => ({ body: Buffer.from(bytes), hint: null })),
  // Truncated or corrupted gzip.
  fc.tuple(jsonTextArb, fc.nat()).map(([text, cut]) => {
    const gz = gzipSync(text);
    return { body: gz.subarray(0, Math.max(2, cut % gz.length)), hint: null };
  }),
  fc.uint8Array({ maxLength: 512 }).map((bytes) => ({ body: Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.from(bytes)]), hint: null })),
  fc.tuple(fc.string(), fc.constantFrom('lz64', 'base64', 'gzip', 'nonsense')).map(([text, hint]) => ({ body: Buffer.from(text), hint })),
);

describe('capture fuzzing', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close());

  it(`never answers 5xx or a non-JSON error, over ${RUNS} bodies`, async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(
        bodyArb,
        fc.constantFrom(...CAPTURE_ROUTES.map((r) => r.path)),
        fc.boolean(),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', undefined),
        async ({ body, hint }, path, trailingSlash, contentType) => {
          const query = hint ? `?compression=${hint}` : '';
          const headers: Record<string, string> = contentType ? { 'Content-Type': contentType } : {};
          const res = await rawRequest(gw.port, { path: `${path}${trailingSlash ? '/' : ''}${query}`, headers, body });
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          expect(res.status).toBeGreaterThanOrEqual(200);
          expect(res.status).toBeLessThan(500);
          if (res.status === 200)
            expect(jsonBody(res)).toEqual({ status: 1, ...((jsonBody(res) as { dropped?: unknown }).dropped ? { dropped: expect.any(Array) } : {}) });
          else expect(jsonBody(res)).toEqual({ type: expect.any(String), code: expect.any(String), detail: expect.any(String), attr: null });
        },
      ),
      { numRuns: RUNS },
    );
    // The generators reach both sides of the contract, not only one kind of rejection.
    expect(statuses.get(200)).toBeGreaterThan(RUNS / 20);
    expect(statuses.get(400)).toBeGreaterThan(RUNS / 20);
    expect(statuses.get(401)).toBeGreaterThan(0);
  }, 300_000);
});
