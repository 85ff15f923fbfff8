import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { createInProcessBus, type EventBus } from '@sightline/bus';
import { listen } from '@sightline/http';
import { silentLogger } from '@sightline/logger';
import { createTestGatewayApp, TEST_TOKEN as TOKEN, testTopics as topics, type TestGatewayOptions } from './test-support';

async function setup(options: TestGatewayOptions = {}) {
  const { app, bus, metrics, received } = await createTestGatewayApp(options);
  return { app, bus, metrics, messages: received };
}

describe('capture routes', () => {
  it.each(['/capture/', '/capture', '/batch/', '/e/', '/i/v0/e/', '/track', '/engage/'])('%s accepts an event and puts it on the bus', async (path) => {
    const { app, messages, bus } = await setup();
    const res = await request(app).post(path).send({ api_key: TOKEN, event: 'signup', distinct_id: 'u1' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 1 });
    expect(messages()).toEqual([{ key: `${TOKEN}:u1`, value: expect.objectContaining({ event: 'signup', distinct_id: 'u1', team_id: 7, token: TOKEN }) }]);
    await bus.close();
  });

  it('drops invalid events of a batch and still answers 200', async () => {
    const { app, messages, metrics, bus } = await setup();
    const res = await request(app)
      .post('/batch/')
      .send({ api_key: TOKEN, batch: [{ event: 'ok', distinct_id: 'a' }, { distinct_id: 'b' }, { event: 'x' }, { event: 'y', distinct_id: '' }] });
    expect(res.status).toBe(200);
    // Each dropped event by its place in the batch, so an importer can count what was not stored.
    expect(res.body).toEqual({
      status: 1,
      dropped: [
        { index: 1, reason: 'missing_event_name' },
        { index: 2, reason: 'missing_distinct_id' },
        { index: 3, reason: 'empty_distinct_id' },
      ],
    });
    expect(messages().map((m) => m.value.event)).toEqual(['ok']);
    const dropped = await metrics.registry.getSingleMetricAsString('ingest_events_dropped_total');
    expect(dropped).toMatch(/reason="missing_event_name"} 1/);
    expect(dropped).toMatch(/reason="missing_distinct_id"} 1/);
    expect(dropped).toMatch(/reason="empty_distinct_id"} 1/);
    await bus.close();
  });

  it('routes historical_migration batches to their own topic', async () => {
    const { app, messages, bus } = await setup();
    const batch = ['c', 'a', 'b'].map((e, i) => ({ event: e, distinct_id: 'm', timestamp: `2020-01-0${3 - i}T00:00:00Z` }));
    expect((await request(app).post('/batch/').send({ api_key: TOKEN, historical_migration: true, batch })).status).toBe(200);
    expect(messages(topics.events)).toEqual([]);
    expect(messages(topics.eventsHistorical).map((m) => [m.value.event, m.value.timestamp])).toEqual([
      ['c', '2020-01-03T00:00:00.000Z'],
      ['a', '2020-01-02T00:00:00.000Z'],
      ['b', '2020-01-01T00:00:00.000Z'],
    ]);
    await bus.close();
  });

  // Over a real socket with fetch: superagent mangles pre-compressed bodies.
  it('reads gzip by header and by magic bytes, and base64 form data', async () => {
    const { app, messages, bus } = await setup();
    const server = await listen(app, { host: '127.0.0.1', port: 0 });
    const post = (path: string, headers: Record<string, string>, body: Buffer | string) =>
      fetch(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', headers, body });
    const body = JSON.stringify({ api_key: TOKEN, batch: [{ event: 'gz', distinct_id: 'u' }] });
    expect((await post('/batch/', { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' }, gzipSync(body))).status).toBe(200);
    expect((await post('/e/', { 'Content-Type': 'text/plain' }, gzipSync(body))).status).toBe(200);
    const form = `data=${encodeURIComponent(Buffer.from(body).toString('base64'))}`;
    expect((await post('/e/?compression=base64', { 'Content-Type': 'application/x-www-form-urlencoded' }, form)).status).toBe(200);
    expect(messages()).toHaveLength(3);
    await server.close();
    await bus.close();
  });

  // PostHog's capture does not trust the hint: it peeks at the body's first bytes for gzip's
  // magic and reads anything else as text (rust/capture/src/v0_request.rs, RawRequest::from_bytes).
  it('reads a body whose compression hint does not match it by what the body is', async () => {
    const { app, messages, bus } = await setup();
    const server = await listen(app, { host: '127.0.0.1', port: 0 });
    const post = (path: string, headers: Record<string, string>, body: Buffer | string) =>
      fetch(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', headers, body }).then(async (r) => [r.status, await r.text()]);
    const json = (event: string) => JSON.stringify({ api_key: TOKEN, batch: [{ event, distinct_id: 'u' }] });
    const form = (event: string) => `data=${encodeURIComponent(Buffer.from(json(event)).toString('base64'))}`;
    const formType = { 'Content-Type': 'application/x-www-form-urlencoded' };
    const ok = [200, '{"status":1}'];
    expect(await post('/e/?compression=gzip-js', formType, form('form under a gzip hint'))).toEqual(ok);
    expect(await post('/batch/?compression=gzip', { 'Content-Type': 'application/json' }, json('json under a gzip hint'))).toEqual(ok);
    expect(await post('/batch/', { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, json('json under Content-Encoding gzip'))).toEqual(ok);
    expect(await post('/e/', formType, gzipSync(json('gzip as a form, no hint')))).toEqual(ok);
    expect(await post('/e/?compression=lz64', { 'Content-Type': 'text/plain' }, gzipSync(json('gzip under an lz64 hint')))).toEqual(ok);
    expect(await post('/e/?compression=base64', formType, gzipSync(json('gzip under a base64 hint')))).toEqual(ok);
    expect(messages().map((m) => m.value.event)).toEqual([
      'form under a gzip hint',
      'json under a gzip hint',
      'json under Content-Encoding gzip',
      'gzip as a form, no hint',
      'gzip under an lz64 hint',
      'gzip under a base64 hint',
    ]);
    // Bytes that start as gzip but are not are still refused.
    const broken = await post('/e/', { 'Content-Type': 'text/plain' }, Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]));
    expect(broken[0]).toBe(400);
    await server.close();
    await bus.close();
  });

  it.each([
    ['malformed JSON', '{"event":', 400, 'parse_error'],
    ['an empty body', '', 400, 'parse_error'],
    ['an empty batch', JSON.stringify({ api_key: TOKEN, batch: [] }), 400, 'invalid_payload'],
    ['a batch that is not a list', JSON.stringify({ api_key: TOKEN, batch: { a: 1 } }), 400, 'invalid_payload'],
    ['no api key', JSON.stringify({ event: 'e', distinct_id: 'u' }), 401, 'invalid_api_key'],
    ['an unknown api key', JSON.stringify({ api_key: 'phc_unknown', event: 'e', distinct_id: 'u' }), 401, 'invalid_api_key'],
    ['a personal api key', JSON.stringify({ api_key: 'phx_secret', event: 'e', distinct_id: 'u' }), 401, 'invalid_api_key'],
  ])('answers %s with a DRF error', async (_case, body, status, code) => {
    const { app, messages, bus } = await setup();
    const res = await request(app).post('/capture/').set('Content-Type', 'application/json').send(body);
    expect(res.status).toBe(status);
    expect(res.body).toEqual({ type: expect.any(String), code, detail: expect.any(String), attr: null });
    expect(messages()).toEqual([]);
    await bus.close();
  });

  it('answers 413 over the body cap', async () => {
    const { app, bus } = await setup();
    const server = await listen(app, { host: '127.0.0.1', port: 0 });
    const res = await fetch(`http://127.0.0.1:${server.port}/batch/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: Buffer.alloc(20 * 1024 * 1024 + 1, 0x20),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('payload_too_large');
    await server.close();
    await bus.close();
  });

  it('fails open when the key store is unreachable, and counts it', async () => {
    const { app, messages, metrics, bus } = await setup({ keys: () => ({ status: 'unavailable' }) });
    expect((await request(app).post('/capture/').send({ api_key: 'phc_any', event: 'e', distinct_id: 'u' })).status).toBe(200);
    expect(messages()[0]!.value.team_id).toBeNull();
    expect(await metrics.registry.getSingleMetricAsString('ingest_project_key_failed_open_total')).toMatch(/ 1$/m);
    await bus.close();
  });

  it('answers 503 with Retry-After when the bus does not acknowledge in time', async () => {
    const stuck: EventBus = {
      ...createInProcessBus(silentLogger()),
      send: () => new Promise(() => undefined),
      subscribe: async () => ({ stop: async () => undefined, idleMs: () => 0 }),
    };
    const { app } = await setup({ bus: stuck, sendTimeoutMs: 100 });
    const res = await request(app).post('/capture/').send({ api_key: TOKEN, event: 'e', distinct_id: 'u' });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.body.type).toBe('server_error');
  });

  it('answers CORS preflights on ingest routes', async () => {
    const { app, bus } = await setup();
    const res = await request(app).options('/e/').set('Origin', 'https://example.com').set('Access-Control-Request-Headers', 'content-type');
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('https://example.com');
    expect(res.headers['access-control-allow-headers']).toBe('content-type');
    await bus.close();
  });

  it('answers unknown routes with a JSON 404', async () => {
    const { app, bus } = await setup();
    const res = await request(app).get('/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null });
    await bus.close();
  });
});
