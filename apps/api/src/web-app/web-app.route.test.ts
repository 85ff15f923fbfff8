import { createServiceApp } from '@sightline/http';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import request from 'supertest';
import { createWebAppRouter, isAppPath } from './web-app.route';
import type { WebAppFile, WebAppFiles } from './web-app-files';

const file = (body: string, contentType: string, etag: string): WebAppFile => ({ body: Buffer.from(body), contentType, etag });

const built: WebAppFiles = {
  index: file('<!doctype html><div id="app"></div>', 'text/html; charset=utf-8', '"index-etag"'),
  asset: (name) => (name === 'index-abc123.js' ? file('console.log(1)', 'text/javascript; charset=utf-8', '"asset-etag"') : null),
};

function appWith(files: WebAppFiles) {
  return createServiceApp({
    name: 'test',
    logger: silentLogger(),
    metrics: createMetrics(),
    readiness: [],
    isShuttingDown: () => false,
    routers: [createWebAppRouter(files)],
  });
}

describe('the web app at /', () => {
  const app = appWith(built);

  it.each(['/', '/events', '/trends', '/persons/0190-abc', '/feature_flags/12', '/login', '/setup', '/eventsx', '/flagship'])(
    'answers %s with the page, revalidated on every load',
    async (path) => {
      const res = await request(app).get(path).expect(200);
      expect(res.text).toContain('<div id="app">');
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['x-frame-options']).toBe('DENY');
    },
  );

  it('serves hashed assets as immutable, with 304 on a matching ETag', async () => {
    const res = await request(app).get('/assets/index-abc123.js').expect(200);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    await request(app).get('/assets/index-abc123.js').set('If-None-Match', '"asset-etag"').expect(304);
    await request(app).get('/').set('If-None-Match', '"index-etag"').expect(304);
  });

  it.each([
    '/api/unknown',
    '/api',
    '/e',
    '/e/',
    '/i/v0/e/',
    '/capture',
    '/batch/',
    '/decide',
    '/flags',
    '/static/nope.js',
    '/array/phc_x/config',
    '/track',
    '/engage',
    '/s',
    '/assets/missing.js',
    '/favicon.ico',
    '/events/export.csv',
  ])('never answers %s with the page (JSON 404 instead)', async (path) => {
    const res = await request(app).get(path).expect(404);
    expect(res.body).toMatchObject({ type: 'invalid_request', code: 'not_found' });
  });

  it('leaves writes to other routes', async () => {
    await request(app).post('/events').send({}).expect(404);
  });

  it('says how to build the app when it was not built, and still 404s reserved paths', async () => {
    const unbuilt = appWith({ index: null, asset: () => null });
    const res = await request(unbuilt).get('/events').expect(503);
    expect(res.text).toContain('npm run build:web');
    await request(unbuilt).get('/api/x').expect(404);
  });

  it('classifies paths by their first segment and file extension', () => {
    expect(isAppPath('/')).toBe(true);
    expect(isAppPath('/trends')).toBe(true);
    expect(isAppPath('/static')).toBe(false);
    expect(isAppPath('/_health')).toBe(false);
    expect(isAppPath('/metrics')).toBe(false);
    expect(isAppPath('/robots.txt')).toBe(false);
  });
});
