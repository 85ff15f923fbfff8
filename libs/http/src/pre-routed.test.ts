import type { ErrorRequestHandler, RequestHandler } from 'express';
import request from 'supertest';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { errors } from './api-error';
import { preRoutedFastPath, type PreRoutedRoute } from './pre-routed';
import { createServiceApp } from './service-app';

/** An app whose Express routers know no route: whatever answers 2xx or a route's own error came through the pre-routed path. */
function appWith(route: Partial<PreRoutedRoute> & Pick<PreRoutedRoute, 'handlers'>, trustProxy?: string) {
  return createServiceApp({
    name: 't',
    logger: silentLogger(),
    metrics: createMetrics(),
    readiness: [],
    isShuttingDown: () => false,
    routers: [],
    trustProxy,
    fastPaths: [preRoutedFastPath([{ method: 'POST', path: '/api/things/:thing_id/run', before: [], onError: [], ...route }])],
  });
}

describe('preRoutedFastPath', () => {
  it("runs the handlers in order with Express's request and response, the path's parameters and the app's settings", async () => {
    const seen: string[] = [];
    const app = appWith(
      {
        before: [(req, _res, next) => (seen.push(`before ${req.originalUrl}`), next())],
        handlers: [
          (req, _res, next) => (seen.push(`params ${JSON.stringify(req.params)} query ${JSON.stringify(req.query)}`), next()),
          (req, res) => void res.status(201).json({ ip: req.ip, id: req.id }),
        ],
      },
      'loopback',
    );
    const res = await request(app).post('/api/things/42/run/?a=1').set('X-Forwarded-For', '203.0.113.9').set('X-Request-Id', 'r-1');
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ ip: '203.0.113.9', id: 'r-1' });
    expect(res.headers['x-request-id']).toBe('r-1');
    expect(seen).toEqual(['before /api/things/42/run/?a=1', 'params {"thing_id":"42"} query {"a":"1"}']);
  });

  it('passes a thrown error, a rejected promise and next(error) through the error handlers to the DRF answer', async () => {
    const mapped: ErrorRequestHandler = (err, _req, _res, next) => next(err instanceof RangeError ? errors.validation('mapped', 'x', 'mapped') : err);
    const failing: Record<string, RequestHandler> = {
      thrown: () => {
        throw new RangeError('no');
      },
      rejected: async () => {
        throw errors.notFound();
      },
      next: (_req, _res, next) => next(errors.permissionDenied('not yours')),
      bug: () => {
        throw new Error('a bug');
      },
    };
    const answers: [string, number, string][] = [];
    for (const [name, handler] of Object.entries(failing)) {
      const res = await request(appWith({ handlers: [handler], onError: [mapped] })).post('/api/things/1/run');
      answers.push([name, res.status, res.body.code]);
      expect(Object.keys(res.body).sort()).toEqual(['attr', 'code', 'detail', 'type']);
    }
    expect(answers).toEqual([
      ['thrown', 400, 'mapped'],
      ['rejected', 404, 'not_found'],
      ['next', 403, 'permission_denied'],
      ['bug', 500, 'error'],
    ]);
  });

  it('answers 404 when the handlers pass the request on, as Express does after the last route', async () => {
    for (const handler of [(_req, _res, next) => next(), (_req, _res, next) => next('route')] as RequestHandler[]) {
      const res = await request(appWith({ handlers: [handler] })).post('/api/things/1/run');
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it('leaves to Express every other method, path and spelling of the path', async () => {
    const app = appWith({ handlers: [(_req, res) => void res.json({ taken: true })] });
    expect((await request(app).post('/api/things/1/run')).body).toEqual({ taken: true });
    for (const res of [
      await request(app).get('/api/things/1/run'),
      await request(app).post('/api/things/1/run/more'),
      await request(app).post('/API/things/1/run'),
      await request(app).post('/api/things/%31/run'),
      await request(app).post('/api/things//run'),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body).not.toEqual({ taken: true });
    }
  });

  it('refuses a path it cannot match exactly as Express would', () => {
    for (const path of ['/api/:id(\\d+)', '/api/*rest', '/api/{optional}']) {
      expect(() => preRoutedFastPath([{ method: 'POST', path, before: [], handlers: [], onError: [] }])).toThrow(/pre-routed path/);
    }
  });
});
