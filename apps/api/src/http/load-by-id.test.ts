import express from 'express';
import request from 'supertest';
import { errorHandler } from '@sightline/http';
import { loadById, parseObjectId } from './load-by-id';

declare module 'express-serve-static-core' {
  interface Request {
    loadByIdTestRow?: { teamId: number; id: number };
  }
}

describe('loadById', () => {
  // Project 1 holds objects 7 and 999999999; project 2 holds object 8.
  const rows = new Map([
    ['1:7', { teamId: 1, id: 7 }],
    ['1:999999999', { teamId: 1, id: 999_999_999 }],
    ['2:8', { teamId: 2, id: 8 }],
  ]);
  const asked: string[] = [];
  const app = express();
  app.use((req, _res, next) => {
    req.project = { id: 1 } as never;
    next();
  });
  app.get(
    '/things/:thing_id',
    loadById('thing_id', 'loadByIdTestRow', async (teamId, id) => {
      asked.push(`${teamId}:${id}`);
      return rows.get(`${teamId}:${id}`) ?? null;
    }),
    (req, res) => void res.json(req.loadByIdTestRow),
  );
  app.use(errorHandler());
  const notFound = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null };

  it("loads the project's object the path names", async () => {
    const res = await request(app).get('/things/7');
    expect([res.status, res.body]).toEqual([200, { teamId: 1, id: 7 }]);
    expect((await request(app).get('/things/999999999')).body).toEqual({ teamId: 1, id: 999_999_999 });
  });

  it("answers DRF's 404 for another project's object, no object, or an id that is not one, without asking for the last", async () => {
    asked.length = 0;
    for (const id of ['8', '9', 'abc', '-1', '1e3', '1234567890', '7.0']) {
      const res = await request(app).get(`/things/${id}`);
      expect([id, res.status, res.body]).toEqual([id, 404, notFound]);
    }
    expect(asked).toEqual(['1:8', '1:9']);
  });

  it('parses ids as PostHog integer keys', () => {
    expect([parseObjectId('42'), parseObjectId(undefined), parseObjectId(' 42'), parseObjectId('0042')]).toEqual([42, null, null, 42]);
  });
});
