/**
 * The capture status-code contract, table-driven: one row per (route × encoding × case),
 * generated from CAPTURE_ROUTES, plus the body-cap boundaries of every route.
 */
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import LZString from 'lz-string';
import { createInProcessBus } from '@sightline/bus';
import { silentLogger } from '@sightline/logger';
import { decodeCaptureText } from './capture-body';
import { CAPTURE_ROUTES, EVENT_LIMITS, MAX_EVENT_MESSAGE_BYTES, type CaptureRoute } from './capture.route';
import { createLz64Decoder } from './lz64-decoder';
import { jsonBody, rawRequest, startTestGateway, TEST_TOKEN, type TestGateway } from './test-support';

const MiB = 1024 * 1024;

/**
 * Each route's wire cap as the specs give it (docs/http-api.md#capture-caps: 20 MiB batches;
 * 2 MiB single-event routes). A route added to CAPTURE_ROUTES without an entry here fails.
 */
const SPEC_WIRE_CAP: Record<string, number> = {
  '/batch': 20 * MiB,
  '/capture': 2 * MiB,
  '/e': 2 * MiB,
  '/i/v0/e': 2 * MiB,
  '/track': 2 * MiB,
  '/engage': 2 * MiB,
};

/**
 * An LZ-String base64 stream of `codes` codes where each code names the entry being created
 * (the "cScSc" case): entry n is n+1 characters long, so the text is codes²/2 characters and
 * lz-string's decoder keeps every entry. Written bit by bit the way lz-string's _decompress reads.
 */
function lz64Bomb(codes: number): string {
  const bits: number[] = [];
  const write = (value: number, width: number) => {
    for (let i = 0; i < width; i++) bits.push((value >> i) & 1);
  };
  write(0, 2); // an 8-bit literal follows
  write(0x61, 8); // 'a' → dictionary[3]
  let dictSize = 4;
  let numBits = 3;
  let enlargeIn = 4;
  const grow = () => {
    if (enlargeIn === 0) {
      enlargeIn = 2 ** numBits;
      numBits++;
    }
  };
  for (let n = 0; n < codes; n++) {
    write(dictSize, numBits); // the entry about to be added: w + w[0]
    dictSize++;
    enlargeIn--;
    grow();
  }
  write(2, numBits); // end of stream
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  for (let i = 0; i < bits.length; i += 6) {
    let v = 0;
    for (let j = 0; j < 6; j++) v = (v << 1) | (bits[i + j] ?? 0);
    out += alphabet[v];
  }
  return out;
}

interface Encoded {
  query: string;
  headers: Record<string, string>;
  body: Buffer | string;
}

/** Every way the SDKs send a body (docs/http-api.md#capture-bodies). */
const ENCODINGS: Record<string, (json: string) => Encoded> = {
  json: (json) => ({ query: '', headers: { 'Content-Type': 'application/json' }, body: json }),
  'gzip by Content-Encoding': (json) => ({ query: '', headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, body: gzipSync(json) }),
  'gzip by ?compression=gzip-js': (json) => ({ query: '?compression=gzip-js', headers: { 'Content-Type': 'application/json' }, body: gzipSync(json) }),
  'gzip by magic bytes (text/plain)': (json) => ({ query: '', headers: { 'Content-Type': 'text/plain' }, body: gzipSync(json) }),
  'form data=base64': (json) => ({
    query: '?compression=base64',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`,
  }),
  'form data=lz64': (json) => ({
    query: '?compression=lz64',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: `data=${encodeURIComponent(LZString.compressToBase64(json))}`,
  }),
  'raw lz64': (json) => ({ query: '?compression=lz64', headers: { 'Content-Type': 'text/plain' }, body: LZString.compressToBase64(json) }),
};

interface Case {
  body: string;
  status: number;
  /** Error code of a 4xx, or the event names that must reach the bus for a 200. */
  code?: string;
  ingested?: string[];
  /** The 200 answer's `dropped` list, when events were dropped. */
  dropped?: { index: number; reason: string }[];
}

const ev = (event: unknown, distinctId: unknown, extra: Record<string, unknown> = {}) => ({ event, distinct_id: distinctId, ...extra });
const CASES: Record<string, Case> = {
  'single event': { body: JSON.stringify({ api_key: TEST_TOKEN, ...ev('one', 'u1') }), status: 200, ingested: ['one'] },
  'batch envelope': { body: JSON.stringify({ api_key: TEST_TOKEN, batch: [ev('b1', 'u1'), ev('b2', 'u2')] }), status: 200, ingested: ['b1', 'b2'] },
  'bare array, token per event': { body: JSON.stringify([ev('a1', 'u1', { token: TEST_TOKEN })]), status: 200, ingested: ['a1'] },
  'token in properties, distinct id in properties': {
    body: JSON.stringify({ event: 'p1', properties: { token: TEST_TOKEN, distinct_id: 'u9' } }),
    status: 200,
    ingested: ['p1'],
  },
  'events without a name or distinct id are dropped, the rest kept': {
    body: JSON.stringify({ api_key: TEST_TOKEN, batch: [ev('kept', 'u'), ev('', 'u'), ev('x', ''), { event: 'y' }, 'junk'] }),
    status: 200,
    ingested: ['kept'],
    dropped: [
      { index: 1, reason: 'missing_event_name' },
      { index: 2, reason: 'empty_distinct_id' },
      { index: 3, reason: 'missing_distinct_id' },
      { index: 4, reason: 'not_an_object' },
    ],
  },
  'malformed JSON': { body: '{"api_key": "phc_x", "event": ', status: 400, code: 'parse_error' },
  'empty batch': { body: JSON.stringify({ api_key: TEST_TOKEN, batch: [] }), status: 400, code: 'invalid_payload' },
  'no api key': { body: JSON.stringify(ev('e', 'u')), status: 401, code: 'invalid_api_key' },
  'unknown api key': { body: JSON.stringify({ api_key: 'phc_unknown', ...ev('e', 'u') }), status: 401, code: 'invalid_api_key' },
  'personal api key': { body: JSON.stringify({ api_key: 'phx_personal', ...ev('e', 'u') }), status: 401, code: 'invalid_api_key' },
  'inconsistent tokens': {
    body: JSON.stringify([ev('a', 'u', { token: TEST_TOKEN }), ev('b', 'u', { token: 'phc_other' })]),
    status: 401,
    code: 'invalid_api_key',
  },
};

const slash = (route: CaptureRoute, i: number) => (i % 2 === 0 ? `${route.path}/` : route.path);
const rows = CAPTURE_ROUTES.flatMap((route, r) =>
  Object.entries(ENCODINGS).flatMap(([encoding], e) => Object.entries(CASES).map(([name], c) => ({ path: slash(route, r + e + c), encoding, name }))),
);

describe('capture status contract (route × encoding × case)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close());

  it('covers every route of the table with its spec cap', () => {
    expect(Object.keys(SPEC_WIRE_CAP).sort()).toEqual(CAPTURE_ROUTES.map((r) => r.path).sort());
    for (const route of CAPTURE_ROUTES) expect(route.limits.wireBytes).toBe(SPEC_WIRE_CAP[route.path]);
    expect(rows).toHaveLength(CAPTURE_ROUTES.length * Object.keys(ENCODINGS).length * Object.keys(CASES).length);
  });

  it.each(rows)('POST $path, $encoding: $name', async ({ path, encoding, name }) => {
    const testCase = CASES[name]!;
    const encoded = ENCODINGS[encoding]!(testCase.body);
    const before = gw.received().length;
    const res = await rawRequest(gw.port, { path: path + encoded.query, headers: { ...encoded.headers, Origin: 'https://app.example' }, body: encoded.body });
    expect({ status: res.status, body: res.text }).toEqual({ status: testCase.status, body: expect.any(String) });
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    if (testCase.status === 200) {
      expect(jsonBody(res)).toEqual(testCase.dropped ? { status: 1, dropped: testCase.dropped } : { status: 1 });
      expect(
        gw
          .received()
          .slice(before)
          .map((m) => m.value.event),
      ).toEqual(testCase.ingested);
    } else {
      expect(jsonBody(res)).toEqual({ type: expect.any(String), code: testCase.code, detail: expect.any(String), attr: null });
      expect(gw.received()).toHaveLength(before);
    }
  });

  it.each(CAPTURE_ROUTES.flatMap((r) => [`${r.path}/`, r.path]))('OPTIONS %s answers the SDK preflight', async (path) => {
    const res = await rawRequest(gw.port, {
      method: 'OPTIONS',
      path,
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    expect(res.headers['access-control-allow-headers']).toBe('content-type');
  });

  it.each(CAPTURE_ROUTES.map((r) => r.path))('GET %s is a JSON 405, never a redirect', async (path) => {
    const res = await rawRequest(gw.port, { method: 'GET', path: `${path}/` });
    expect(res.status).toBe(405);
    expect(jsonBody(res)).toMatchObject({ code: 'method_not_allowed' });
  });

  it('answers a beacon with 204 and no body, as PostHog does', async () => {
    const res = await rawRequest(gw.port, {
      path: '/e/?beacon=1',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ api_key: TEST_TOKEN, ...ev('beacon', 'u') }),
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });
});

describe('body caps on every route', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(() => gw.close(), 30_000);

  /** A valid batch body of exactly `bytes` bytes, padded inside events of at most 500 kB (each fits a Kafka message). */
  const bodyOfSize = (bytes: number) => {
    const eventCount = Math.max(1, Math.ceil(bytes / 450_000));
    const pads = Array.from({ length: eventCount }, () => '');
    const render = () => JSON.stringify({ api_key: TEST_TOKEN, batch: pads.map((pad, i) => ({ event: 'big', distinct_id: `u${i}`, properties: { pad } })) });
    let missing = bytes - render().length;
    for (let i = 0; i < eventCount && missing > 0; i++) {
      const add = Math.min(missing, 490_000);
      pads[i] = 'x'.repeat(add);
      missing -= add;
    }
    const body = render();
    if (body.length !== bytes) throw new Error(`bodyOfSize(${bytes}) built ${body.length} bytes`);
    return body;
  };

  it.each(CAPTURE_ROUTES.map((r) => [r.path, r.limits.wireBytes] as const))(
    '%s: cap+1 bytes → 413, the keep-alive connection serves the next request, and exactly the cap is accepted',
    async (path, cap) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      let connections = 0;
      const countConnection = () => connections++;
      gw.server.server.on('connection', countConnection);
      try {
        const warm = await rawRequest(gw.port, { path: `${path}/`, agent, headers: { 'Content-Type': 'application/json' }, body: bodyOfSize(200) });
        expect(warm.status).toBe(200);
        const over = await rawRequest(gw.port, { path: `${path}/`, agent, headers: { 'Content-Type': 'application/json' }, body: bodyOfSize(cap + 1) });
        expect(over.status).toBe(413);
        expect(jsonBody(over)).toMatchObject({ code: 'payload_too_large' });
        const next = await rawRequest(gw.port, { path: `${path}/`, agent, headers: { 'Content-Type': 'application/json' }, body: bodyOfSize(200) });
        expect(next.status).toBe(200);
        // Same connection: the agent's req.reusedSocket is false when a queued request takes a
        // socket that just finished, so the test counts the server's connections instead.
        expect(next.localPort).toBe(warm.localPort);
        expect(connections).toBe(1);
        const atCap = await rawRequest(gw.port, { path: `${path}/`, agent, headers: { 'Content-Type': 'application/json' }, body: bodyOfSize(cap) });
        expect(atCap.status).toBe(200);
      } finally {
        gw.server.server.off('connection', countConnection);
        agent.destroy();
      }
    },
  );

  it('413s a chunked body (no Content-Length) as soon as it passes the cap', async () => {
    const res = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: gw.port, method: 'POST', path: '/e/', headers: { 'Content-Type': 'application/json' } });
      req.on('response', (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(256 * 1024, 0x20);
      for (let i = 0; i < 12; i++) req.write(chunk); // 3 MiB > 2 MiB, never ended
    });
    expect(res).toBe(413);
  });

  it.each(['/e/', '/batch/'])(
    '%s: a gzip bomb gets 413 quickly without inflating it (memory bounded by the budget)',
    async (path) => {
      const route = CAPTURE_ROUTES.find((r) => `${r.path}/` === path)!;
      // 256 MiB of zeros is about 250 KiB gzipped: under every wire cap, over every budget.
      const bomb = gzipSync(Buffer.alloc(256 * MiB), { level: 9 });
      expect(bomb.length).toBeLessThan(route.limits.wireBytes);
      const baseline = process.memoryUsage().arrayBuffers;
      let peak = baseline;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 2);
      const started = Date.now();
      const res = await rawRequest(gw.port, { path, headers: { 'Content-Type': 'text/plain' }, body: bomb });
      clearInterval(sampler);
      expect(res.status).toBe(413);
      expect(jsonBody(res)).toMatchObject({ code: 'payload_too_large' });
      // A hang guard, not a speed check (a loaded machine took 7 s): a full inflate of the bomb never answers 413 at all.
      expect(Date.now() - started).toBeLessThan(30_000);
      // The budget plus zlib's buffers and the bomb itself, below the 256 MiB a full inflate needs.
      expect(peak - baseline).toBeLessThan(route.limits.decodedBytes + 64 * MiB);
    },
    60_000,
  );

  it('a decoded (lz64) body over the budget is 413', async () => {
    // lz-string compresses at a few MB/s, so the budget is exercised on the decoder directly.
    const decoder = createLz64Decoder();
    try {
      const json = JSON.stringify({ api_key: TEST_TOKEN, event: 'e', distinct_id: 'u', properties: { pad: 'ab'.repeat(5000) } });
      const lz64 = Buffer.from(LZString.compressToBase64(json));
      await expect(decodeCaptureText(lz64, 'text/plain', 'lz64', { wireBytes: 2000, decodedBytes: 10_000 }, decoder)).rejects.toMatchObject({ status: 413 });
      await expect(decodeCaptureText(lz64, 'text/plain', 'lz64', { wireBytes: 2000, decodedBytes: 20_000 }, decoder)).resolves.toBe(json);
    } finally {
      await decoder.close();
    }
  });

  it('an lz64 bomb (quadratic dictionary growth) gets 413 and the gateway keeps serving', async () => {
    const bomb = lz64Bomb(150_000);
    expect(bomb.length).toBeLessThan(EVENT_LIMITS.wireBytes);
    const started = Date.now();
    const res = await rawRequest(gw.port, { path: '/e/?compression=lz64', headers: { 'Content-Type': 'text/plain' }, body: bomb });
    expect(res.status).toBe(413);
    expect(Date.now() - started).toBeLessThan(15_000);
    const json = JSON.stringify({ api_key: TEST_TOKEN, event: 'after bomb', distinct_id: 'u' });
    const next = await rawRequest(gw.port, { path: '/e/?compression=lz64', headers: { 'Content-Type': 'text/plain' }, body: LZString.compressToBase64(json) });
    expect(next.status).toBe(200);
  }, 60_000);
});

describe.each([
  ['a bus that is handed the messages (in-process)', false],
  ['a bus that reads every value (Kafka): the encoding is measured, no bound walked first', true],
])('event size on %s', (_, readsValues) => {
  let gw: TestGateway;
  beforeAll(async () => {
    const bus = createInProcessBus(silentLogger());
    gw = await startTestGateway({ bus: readsValues ? Object.assign(bus, { readsValues: true }) : bus });
  });
  afterAll(() => gw.close(), 30_000);

  it('413s a batch holding one event too large for a Kafka message, and writes none of it', async () => {
    const before = gw.received().length;
    const batch = [
      { event: 'small', distinct_id: 'u' },
      { event: 'huge', distinct_id: 'u', properties: { pad: 'x'.repeat(MAX_EVENT_MESSAGE_BYTES) } },
    ];
    const res = await rawRequest(gw.port, {
      path: '/batch/',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key: TEST_TOKEN, batch }),
    });
    expect(res.status).toBe(413);
    expect(jsonBody(res)).toMatchObject({ code: 'payload_too_large', detail: expect.stringContaining('maximum event size exceeded') });
    expect(gw.received()).toHaveLength(before);
  });

  it('measures an event in UTF-8 bytes: multi-byte text over the cap is 413, the same count of ASCII under it is written', async () => {
    // 400,000 'é' (2 bytes each) make an 800 kB property: with the rest, over 1,000,000 bytes
    // only as UTF-8; 400,000 'e' stay under.
    const post = (pad: string) =>
      rawRequest(gw.port, {
        path: '/batch/',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ api_key: TEST_TOKEN, batch: [{ event: 'edge', distinct_id: 'u', properties: { pad, again: pad.slice(0, 100_000) } }] }),
      });
    const before = gw.received().length;
    const over = await post('é'.repeat(400_000));
    expect(over.status).toBe(413);
    expect(jsonBody(over)).toMatchObject({ code: 'payload_too_large' });
    expect(gw.received()).toHaveLength(before);
    const under = await post('e'.repeat(400_000));
    expect(under.status).toBe(200);
    const written = gw.received().slice(before);
    expect(written).toHaveLength(1);
    expect((written[0]!.value.data as Record<string, any>).properties.pad).toHaveLength(400_000);
  });
});
