import express from 'express';
import request from 'supertest';
import type { Principal } from '@sightline/auth';
import { errorHandler, errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { choiceField, integerField, objectBody } from './body-fields';
import { checkRouteDeclaration, mountRoutes, RouteDeclarationError, RouteTable, type RouteMeta } from './route-registry';

// No route here names :project_id, so the store is never asked.
const noStore = {} as Sql;
const principal: Principal = { userId: 1, keyId: 1, scopes: ['cohort:read', 'insight:write'], scopedTeams: null, organizationId: 'o' };
const authenticate: express.RequestHandler = (req, _res, next) => {
  if (req.headers.authorization === 'Bearer good') req.principal = principal;
  next();
};

function appOf(table: RouteTable) {
  const app = express();
  app.use(express.json());
  app.use(mountRoutes(table, { db: noStore, authenticate }));
  app.use(errorHandler());
  return app;
}

describe('route registry', () => {
  it('registers each project route under both prefixes, one prefix at a time in declaration order', () => {
    const ok = () => undefined;
    const table = new RouteTable().inProject((project) => {
      project.get('/things/funnel', { scope: 'insight:read', summary: 'A fixed path first' }, ok);
      project.patch('/things/:thing_id', { scope: 'insight:write', summary: 'Then the id' }, ok);
      project.get('', { scope: 'project:read', summary: 'The project itself' }, ok);
    });
    expect(table.routes.map((r) => `${r.method} ${r.path} ${r.summary}`)).toEqual([
      'get /api/projects/:project_id/things/funnel A fixed path first',
      'patch /api/projects/:project_id/things/:thing_id Then the id',
      'get /api/projects/:project_id The project itself',
      'get /api/environments/:project_id/things/funnel A fixed path first',
      'patch /api/environments/:project_id/things/:thing_id Then the id',
      'get /api/environments/:project_id The project itself',
    ]);
  });

  it('refuses to mount a route that declares no scope', () => {
    const table = new RouteTable().get('/api/open', { summary: 'No scope' } as unknown as RouteMeta, (_req, res) => void res.json({}));
    expect(() => mountRoutes(table, { db: noStore, authenticate })).toThrow(RouteDeclarationError);
    expect(() => checkRouteDeclaration({ ...table.routes[0]!, scope: [] })).toThrow('declares no valid scope');
    expect(() => checkRouteDeclaration({ ...table.routes[0]!, scope: 'insight' as never })).toThrow('declares no valid scope');
  });

  it('checks every declared scope in order and answers the first missing one', async () => {
    const table = new RouteTable()
      .get('/api/both', { scope: ['cohort:read', 'person:read'], summary: 'Two scopes' }, (_req, res) => void res.json({ ok: true }))
      .get('/api/read', { scope: 'insight:read', summary: 'Implied by write' }, (_req, res) => void res.json({ ok: true }));
    const app = appOf(table);
    const both = await request(app).get('/api/both').set('Authorization', 'Bearer good');
    expect([both.status, both.body]).toEqual([
      403,
      { type: 'authentication_error', code: 'permission_denied', detail: "API key missing required scope 'person:read'", attr: null },
    ]);
    expect((await request(app).get('/api/read').set('Authorization', 'Bearer good')).status).toBe(200);
    expect((await request(app).get('/api/read')).status).toBe(401);
    const wrongMethod = await request(app).delete('/api/read').set('Authorization', 'Bearer good');
    expect([wrongMethod.status, wrongMethod.headers['allow'], wrongMethod.body.code]).toEqual([405, 'GET, HEAD, OPTIONS', 'method_not_allowed']);
  });

  it('validates a declared body schema with DRF errors before the handler', async () => {
    const handler = jest.fn((_req: express.Request, res: express.Response) => void res.status(201).json({ ok: true }));
    const table = new RouteTable().post(
      '/api/things',
      {
        scope: 'insight:write',
        summary: 'Create',
        body: {
          type: 'object',
          required: ['label'],
          properties: { label: { type: 'string', maxLength: 5 }, tags: { type: 'array', items: { type: 'string' } } },
        },
      },
      handler,
    );
    const app = appOf(table);
    const send = (body: unknown) =>
      request(app)
        .post('/api/things')
        .set('Authorization', 'Bearer good')
        .send(body as object);
    expect((await send({})).body).toEqual({ type: 'validation_error', code: 'required', detail: 'This field is required.', attr: 'label' });
    expect((await send({ label: 'toolong' })).body).toMatchObject({ code: 'max_length', attr: 'label' });
    expect((await send({ label: 'ok', tags: ['a', 3] })).body).toMatchObject({ code: 'invalid', attr: 'tags__1', detail: 'Not a valid string.' });
    expect((await send([1, 2])).body).toMatchObject({ code: 'invalid', attr: null, detail: 'Invalid data. Expected a dictionary, but got list.' });
    expect(handler).not.toHaveBeenCalled();
    expect((await send({ label: 'ok' })).status).toBe(201);
  });

  it("checks the body after the route's own middleware, as DRF looks the object up first", async () => {
    const notFound: express.RequestHandler = (_req, _res, next) => next(errors.notFound());
    const table = new RouteTable()
      .patch('/api/things/:id', { scope: 'insight:write', summary: 'Change', body: objectBody({ kind: choiceField(['a', 'b']) }) }, notFound, (_req, res) => {
        res.json({});
      })
      .patch(
        '/api/other/:id',
        { scope: 'insight:write', summary: 'Change', body: objectBody({ kind: choiceField(['a', 'b']), n: integerField }) },
        (_req, res) => {
          res.json({});
        },
      );
    const app = appOf(table);
    const patch = (path: string, body: object) => request(app).patch(path).set('Authorization', 'Bearer good').send(body);
    expect((await patch('/api/things/1', { kind: 'c' })).status).toBe(404);
    expect((await patch('/api/other/1', { kind: null })).body).toEqual({
      type: 'validation_error',
      code: 'null',
      detail: 'This field may not be null.',
      attr: 'kind',
    });
    expect((await patch('/api/other/1', { kind: 'c' })).body).toMatchObject({ code: 'invalid_choice', attr: 'kind' });
    expect((await patch('/api/other/1', { n: 1.5 })).body).toMatchObject({ code: 'invalid', attr: 'n', detail: 'A valid integer is required.' });
    expect((await patch('/api/other/1', { kind: 'a', n: '7', extra: true })).status).toBe(200);
  });

  it('answers a list route as CSV when format=csv', async () => {
    const table = new RouteTable().get('/api/items', { scope: 'cohort:read', summary: 'List', list: true }, (_req, res) => {
      res.json({
        count: 2,
        next: null,
        previous: null,
        results: [
          { id: 1, name: 'a, b', tags: ['x', 'y'] },
          { id: 2, name: 'say "hi"', extra: { k: 1 } },
        ],
      });
    });
    const res = await request(appOf(table)).get('/api/items?format=csv').set('Authorization', 'Bearer good');
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    expect(res.text).toBe('id,name,tags,extra\r\n1,"a, b",x::y,\r\n2,"say ""hi""",,"{""k"":1}"\r\n');
  });
});
