/**
 * A project's time zone must be one ClickHouse knows: Node still accepts zones the tz database
 * dropped (US/Pacific-New, SystemV/AST4, Canada/East-Saskatchewan), which ClickHouse refuses in
 * every query. Such a zone is refused when set, and a project already storing one gets a 400
 * naming the setting from its queries, not a 500.
 */
import { insertEvents } from '@sightline/clickhouse';
import { testEventRow } from '@sightline/testkit';
import { createFlagFixture, type FlagFixture, serveFixture, type ServedFixture } from '../testing/api-test-fixture';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const DROPPED = ['US/Pacific-New', 'SystemV/AST4', 'Canada/East-Saskatchewan'];

describe('project time zones', () => {
  let fixture: FlagFixture;
  let served: ServedFixture;
  let insightId: unknown;

  beforeAll(async () => {
    fixture = await createFlagFixture('projecttz', () => NOW);
    served = await serveFixture(fixture);
    await insertEvents(fixture.ch, [testEventRow({ event: 'signup', atMs: NOW - 3_600_000 })]);
    insightId = (await served.send('POST', '/api/projects/1/insights/', { name: 'signups', filters: { insight: 'TRENDS', events: [{ id: 'signup' }] } })).json[
      'id'
    ];
  });
  afterAll(async () => {
    await served?.close();
    await fixture?.close();
  });

  it.each(DROPPED)('refuses %s when a project is changed or created', async (zone) => {
    const refused = { type: 'validation_error', code: 'invalid_choice', detail: `"${zone}" is not a valid choice.`, attr: 'timezone' };
    expect((await served.send('PATCH', '/api/projects/1/', { timezone: zone })).json).toEqual(refused);
    expect((await served.send('POST', '/api/projects/', { name: 'other', timezone: zone })).json).toEqual(refused);
  });

  it('accepts the zones ClickHouse knows, and trends run in them', async () => {
    for (const zone of ['America/Los_Angeles', 'America/Regina', 'Europe/Kyiv', 'Etc/GMT+4']) {
      expect((await served.send('PATCH', '/api/projects/1/', { timezone: zone })).json).toMatchObject({ timezone: zone });
      const trend = await served.send('POST', '/api/projects/1/insights/trend/', { events: [{ id: 'signup' }], refresh: true });
      expect([zone, trend.status, trend.json['timezone']]).toEqual([zone, 200, zone]);
    }
  });

  it.each(DROPPED)('answers the queries of a project already storing %s with a 400 naming the setting', async (zone) => {
    // Stored before the check (the API refuses it now): announced as a process started over it would read it.
    await fixture.db.query('UPDATE projects SET timezone = $1 WHERE id = 1', [zone]);
    await fixture.projectChanges.publish(1);
    try {
      const answers = {
        trend: await served.send('POST', '/api/projects/1/insights/trend/', { events: [{ id: 'signup' }], refresh: true }),
        funnel: await served.send('POST', '/api/projects/1/insights/funnel/', { events: [{ id: 'signup' }, { id: 'signup' }], refresh: true }),
        query: await served.send('POST', '/api/projects/1/query/', {
          query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'signup' }] },
          refresh: true,
        }),
        'saved insight': await served.send('GET', `/api/projects/1/insights/${String(insightId)}/?refresh=true`),
      };
      for (const [what, answer] of Object.entries(answers)) {
        expect([what, answer.status, answer.json]).toEqual([
          what,
          400,
          {
            type: 'validation_error',
            code: 'invalid_date',
            detail: `The project's time zone "${zone}" is not one ClickHouse knows; choose another in the project's settings.`,
            attr: 'timezone',
          },
        ]);
      }
    } finally {
      await fixture.db.query("UPDATE projects SET timezone = 'UTC' WHERE id = 1");
      await fixture.projectChanges.publish(1);
    }
  });
});
