import { collectDefinitionSightings, recordDefinitionSightings } from '@sightline/event-property-definitions';
import request from 'supertest';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

describe('event and property definitions', () => {
  let f: FlagFixture;
  let teamId: number;
  beforeAll(async () => {
    f = await createFlagFixture('definitions', Date.now);
    [{ id: teamId }] = (await f.db.query<{ id: number }>('SELECT id FROM projects ORDER BY id LIMIT 1')) as [{ id: number }];
    // Two runs, as the worker records them; the second sees known names again.
    await recordDefinitionSightings(
      f.db,
      collectDefinitionSightings([
        { teamId, event: '$pageview', properties: { $browser: 'Chrome', price: 12.5, '100%_sure': 'x', $set: { email: 'a@example.com', plan: 'pro' } } },
        { teamId, event: '$pageview', properties: { $browser: 'Firefox', price: null } },
        { teamId, event: 'signed_up', properties: { at: '2026-03-02T10:00:00Z', ['k'.repeat(201)]: 1 } },
        { teamId: teamId + 1000, event: 'other_project', properties: { secret: 1 } },
      ]),
    );
    await recordDefinitionSightings(
      f.db,
      collectDefinitionSightings([{ teamId, event: '$pageview', properties: { price: 'free', $set_once: { first_seen: true } } }]),
    );
  });
  afterAll(() => f.close());

  const get = (path: string) => request(f.app).get(`/api/projects/${teamId}/${path}`).set(bearer(ADMIN_KEY));

  it('lists event names most seen first, with their volume, for this project only', async () => {
    const res = await get('event_definitions/').expect(200);
    expect(res.body).toMatchObject({ count: 2, next: null, previous: null });
    expect(res.body.results.map((d: { name: string; volume: number }) => [d.name, d.volume])).toEqual([
      ['$pageview', 3],
      ['signed_up', 1],
    ]);
    expect(res.body.results[0].last_seen_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect((await get('event_definitions/?search=SIGN').expect(200)).body.results.map((d: { name: string }) => d.name)).toEqual(['signed_up']);
  });

  it('lists event properties with the type of the first value seen, kept afterwards', async () => {
    const res = await get('property_definitions/?limit=50').expect(200);
    const byName = Object.fromEntries(res.body.results.map((d: { name: string }) => [d.name, d]));
    expect(Object.keys(byName).sort()).toEqual(['$browser', '100%_sure', 'at', 'price']);
    expect(byName['price']).toMatchObject({ type: 1, property_type: 'Numeric', is_numerical: true, volume: 3 });
    expect(byName['$browser']).toMatchObject({ property_type: 'String', volume: 2 });
    expect(byName['at']).toMatchObject({ property_type: 'DateTime' });
    // % and _ in a search are literal.
    expect((await get('property_definitions/?search=%25').expect(200)).body.results.map((d: { name: string }) => d.name)).toEqual(['100%_sure']);
  });

  it('lists person properties from $set and $set_once', async () => {
    const res = await get('property_definitions/?type=person').expect(200);
    expect(res.body.results.map((d: { name: string; property_type: string }) => [d.name, d.property_type]).sort()).toEqual([
      ['email', 'String'],
      ['first_seen', 'Boolean'],
      ['plan', 'String'],
    ]);
    expect((await get('property_definitions/?type=group').expect(400)).body).toMatchObject({ attr: 'type', code: 'invalid_choice' });
  });

  const send = (method: 'post' | 'patch', path: string, body: unknown) =>
    request(f.app)
      [method](`/api/projects/${teamId}/${path}`)
      .set(bearer(ADMIN_KEY))
      .send(body as object);

  it('describes an event definition, reads it back by id, and refuses another project’s id', async () => {
    const listed = (await get('event_definitions/?search=signed_up').expect(200)).body.results[0];
    expect(listed.description).toBe('');
    const patched = await send('patch', `event_definitions/${listed.id}/`, { description: 'A visitor made an account' }).expect(200);
    expect(patched.body).toMatchObject({ id: listed.id, name: 'signed_up', description: 'A visitor made an account', volume: 1 });
    expect((await get(`event_definitions/${listed.id}/`).expect(200)).body.description).toBe('A visitor made an account');
    const [{ id: otherId }] = (await f.db.query<{ id: number }>('SELECT id FROM event_definitions WHERE team_id <> $1 LIMIT 1', [teamId])) as [{ id: number }];
    await get(`event_definitions/${otherId}/`).expect(404);
    await send('patch', `event_definitions/${otherId}/`, { description: 'x' }).expect(404);
    expect((await send('patch', `event_definitions/${listed.id}/`, { description: 'x'.repeat(4001) }).expect(400)).body).toMatchObject({ attr: 'description' });
  });

  it('defines an event before it is seen, once, and the worker’s sightings count on it', async () => {
    const created = await send('post', 'event_definitions/', { name: 'checkout_started', description: 'Opened the checkout' }).expect(201);
    expect(created.body).toMatchObject({ name: 'checkout_started', description: 'Opened the checkout', volume: 0 });
    const again = await send('post', 'event_definitions/', { name: 'checkout_started' }).expect(200);
    expect(again.body).toMatchObject({ id: created.body.id, description: 'Opened the checkout' });
    await recordDefinitionSightings(f.db, collectDefinitionSightings([{ teamId, event: 'checkout_started', properties: {} }]));
    expect((await get(`event_definitions/${created.body.id}/`).expect(200)).body).toMatchObject({ volume: 1, description: 'Opened the checkout' });
    expect((await send('post', 'event_definitions/', {}).expect(400)).body).toMatchObject({ attr: 'name', code: 'required' });
  });

  it('sets a property’s type and description by hand, is_numerical following the type', async () => {
    const at = (await get('property_definitions/?search=at').expect(200)).body.results.find((d: { name: string }) => d.name === 'at');
    const patched = await send('patch', `property_definitions/${at.id}/`, { property_type: 'Numeric', description: 'When it happened' }).expect(200);
    expect(patched.body).toMatchObject({ name: 'at', property_type: 'Numeric', is_numerical: true, description: 'When it happened' });
    // A description alone keeps the type.
    expect((await send('patch', `property_definitions/${at.id}/`, { description: 'Seconds' }).expect(200)).body.property_type).toBe('Numeric');
    expect((await send('patch', `property_definitions/${at.id}/`, { property_type: 'Decimal' }).expect(400)).body).toMatchObject({ attr: 'property_type' });
    expect((await get(`property_definitions/${at.id}/`).expect(200)).body).toMatchObject({ property_type: 'Numeric', description: 'Seconds' });
  });
});
