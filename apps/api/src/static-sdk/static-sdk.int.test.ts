import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import request from 'supertest';
import { createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const PACKAGE_JSON = require.resolve('posthog-js/package.json');
const DIST = join(dirname(PACKAGE_JSON), 'dist');
const VERSION = (JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { version: string }).version;

describe('posthog-js files under /static/', () => {
  let f: FlagFixture;
  beforeAll(async () => {
    f = await createFlagFixture('static_sdk', Date.now);
  });
  afterAll(() => f.close());

  it.each(['array.js', 'array.full.js', 'surveys.js', 'array.js.map'])('serves %s from the installed package, readable cross-origin', async (name) => {
    const res = await request(f.app)
      .get(`/static/${name}`)
      .buffer(true)
      .parse((r, done) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => done(null, Buffer.concat(chunks)));
      })
      .expect(200);
    expect(Buffer.compare(res.body as Buffer, readFileSync(join(DIST, name)))).toBe(0);
    expect(res.headers['content-type']).toMatch(name.endsWith('.map') ? /^application\/json/ : /^application\/javascript/);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    expect(res.headers['etag']).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
  });

  it('serves the versioned path the SDK loads extensions from as immutable, and 304 on a matching ETag', async () => {
    const res = await request(f.app).get(`/static/${VERSION}/dead-clicks-autocapture.js`).expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    await request(f.app).get(`/static/${VERSION}/dead-clicks-autocapture.js`).set('If-None-Match', res.headers['etag']!).expect(304);
    await request(f.app).head('/static/array.js').expect(200);
  });

  it.each([
    '/static/nope.js',
    '/static/array.d.ts',
    '/static/..%2Fpackage.json',
    '/static/..%2F..%2F..%2Fpackage.json',
    '/static/%2e%2e/package.json',
    '/static/0.0.1/array.js',
    `/static/${VERSION}/..%2Fpackage.json`,
  ])('answers 404 JSON for %s (no other file is reachable)', async (path) => {
    const res = await request(f.app).get(path).expect(404);
    expect(res.body).toMatchObject({ type: 'invalid_request', code: 'not_found' });
  });
});
