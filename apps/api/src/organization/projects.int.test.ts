import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');

describe('project settings: timezone, week start and test-account filters reach trends', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);

  beforeAll(async () => {
    f = await createFlagFixture('projects', () => NOW);
    await f.addKey('phx_project_reader', ['project:read', 'insight:read']);
    await insertEvents(f.ch, [
      // 04:30 UTC on Jan 9 is still Jan 8 in New York.
      testEventRow({ event: 'e', atMs: Date.parse('2024-01-09T04:30:00Z'), properties: { $host: 'localhost' } }),
      testEventRow({ event: 'e', atMs: Date.parse('2024-01-09T12:00:00Z'), properties: { $host: 'shop.test' } }),
    ]);
  });
  afterAll(() => f.close());

  const trend = (body: Record<string, unknown>) =>
    request(f.app)
      .post('/api/projects/1/insights/trend/')
      .set(admin)
      .send({ events: [{ id: 'e' }], date_from: '2024-01-08', date_to: '2024-01-09', refresh: true, ...body });

  it('reads and changes the settings, checking each', async () => {
    const before = await request(f.app).get('/api/projects/1/').set(admin);
    expect(before.body).toMatchObject({ id: 1, timezone: 'UTC', week_start_day: null, test_account_filters: [] });
    const filters = [{ key: '$host', value: 'localhost', operator: 'is_not', type: 'event' }];
    const patched = await request(f.app)
      .patch('/api/projects/1/')
      .set(admin)
      .send({ timezone: 'America/New_York', week_start_day: 1, test_account_filters: filters });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ timezone: 'America/New_York', week_start_day: 1, test_account_filters: filters });
    expect((await request(f.app).get('/api/environments/1/').set(admin)).body.timezone).toBe('America/New_York');
  });

  it('trends bucket in the project timezone, start weeks on its day and apply its test-account filters', async () => {
    const daily = await trend({});
    expect(daily.body.timezone).toBe('America/New_York');
    expect(daily.body.result[0].data).toEqual([1, 1]);
    const weekly = await trend({ interval: 'week', date_from: '2024-01-01', date_to: '2024-01-14' });
    // Monday starts: Jan 1 and Jan 8.
    expect(weekly.body.result[0].days).toEqual(['2024-01-01', '2024-01-08']);
    expect((await trend({ filter_test_accounts: true })).body.result[0].data).toEqual([0, 1]);
  });

  it.each([
    [{ timezone: 'Mars/Olympus' }, 'timezone', 'invalid_choice'],
    [{ week_start_day: 3 }, 'week_start_day', 'invalid_choice'],
    [{ test_account_filters: [{ key: 'x', operator: 'near', value: 1 }] }, 'test_account_filters__0', 'invalid_operator'],
    [{ name: '' }, 'name', 'blank'],
  ])('refuses %j with a 400 naming %s', async (body, attr, code) => {
    const res = await request(f.app).patch('/api/projects/1/').set(admin).send(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'validation_error', attr, code });
  });

  it('needs project:write to change settings', async () => {
    expect((await request(f.app).patch('/api/projects/1/').set(bearer('phx_project_reader')).send({ name: 'x' })).status).toBe(403);
    expect((await request(f.app).get('/api/projects/1/').set(bearer('phx_project_reader'))).status).toBe(200);
  });
});
