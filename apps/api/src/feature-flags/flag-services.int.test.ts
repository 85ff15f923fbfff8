/**
 * The feature-flag services that took their rules out of route handlers, called directly on
 * real PostgreSQL and ClickHouse: the usage dashboard's steps and refusals, and role access.
 */
import { randomUUID } from 'node:crypto';
import { insertEvents } from '@sightline/clickhouse';
import { createTestStores, insertCohort, insertFlag, testEventRow, type TestStores } from '@sightline/testkit';
import { serializeFlag } from './feature-flag.serializer';
import { findFlag, type FlagRow } from './feature-flags.repository';
import { createFlagUsageDashboard, enrichFlagUsageDashboard } from './flag-analytics.service';
import { loadFlagRelations } from './flag-relations';
import { findFlagRoleAccess, grantRoleAccess, revokeRoleAccess } from './flag-role-access.service';

describe('feature flag services', () => {
  let stores: TestStores;
  let admin: { id: number; organization_id: string };
  const flag = async (key: string): Promise<FlagRow> =>
    (await findFlag(stores.db, 1, await insertFlag(stores.db, 1, { key, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })))!;

  beforeAll(async () => {
    stores = await createTestStores('flagservices');
    [admin] = await stores.db.query<{ id: number; organization_id: string }>('SELECT id, organization_id FROM users ORDER BY id LIMIT 1');
  });
  afterAll(() => stores.close());

  it('creates the usage dashboard, refuses to enrich it without enriched events, then enriches it once', async () => {
    const { db, ch } = stores;
    const tiles = (dashboardId: number) =>
      db.query<{ name: string; last_modified_by_id: number | null; created_by_id: number; short_id: string }>(
        'SELECT i.name, i.last_modified_by_id, i.created_by_id, i.short_id FROM dashboard_tiles t JOIN insights i ON i.id = t.insight_id WHERE t.dashboard_id = $1 ORDER BY t.id',
        [dashboardId],
      );
    const initial = await flag('usage');
    expect(await enrichFlagUsageDashboard(stores, initial, admin.id)).toEqual({ ok: false, error: 'Usage dashboard not found' });

    expect(await createFlagUsageDashboard(db, initial, admin.id)).toEqual({ ok: true });
    const withDashboard = (await findFlag(db, 1, initial.id))!;
    const dashboardId = withDashboard.usage_dashboard_id!;
    const [dashboard] = await db.query<{ name: string; creation_mode: string }>('SELECT name, creation_mode FROM dashboards WHERE id = $1', [dashboardId]);
    expect(dashboard).toEqual({ name: 'Generated Dashboard: usage Usage', creation_mode: 'template' });
    const created = await tiles(dashboardId);
    // A template's insights are made by the user and edited by no one yet.
    expect(created.map(({ name, created_by_id, last_modified_by_id }) => ({ name, created_by_id, last_modified_by_id }))).toEqual([
      { name: 'Feature Flag Called Total Volume', created_by_id: admin.id, last_modified_by_id: null },
      { name: 'Feature Flag calls made by unique users per variant', created_by_id: admin.id, last_modified_by_id: null },
    ]);
    for (const { short_id } of created) expect(short_id).toMatch(/^[0-9a-zA-Z]{8}$/);

    expect(await enrichFlagUsageDashboard(stores, withDashboard, admin.id)).toEqual({
      ok: false,
      error: 'No enriched analytics available for this feature flag',
    });
    expect((await findFlag(db, 1, initial.id))!.has_enriched_analytics).toBe(false);

    await insertEvents(ch, [testEventRow({ event: '$feature_view', atMs: Date.now(), properties: { feature_flag: 'usage' } })]);
    expect(await enrichFlagUsageDashboard(stores, withDashboard, admin.id)).toEqual({ ok: true });
    const enriched = (await findFlag(db, 1, initial.id))!;
    expect(enriched.has_enriched_analytics).toBe(true);
    expect((await tiles(dashboardId)).map((t) => t.name)).toEqual([
      'Feature Flag Called Total Volume',
      'Feature Flag calls made by unique users per variant',
      'Feature Interaction Total Volume',
      'Feature Viewed Total Volume',
    ]);
    expect(await enrichFlagUsageDashboard(stores, enriched, admin.id)).toEqual({ ok: false, error: 'Usage dashboard already has enriched data' });
  });

  it('grants a role of the organisation once, and revokes an entry once', async () => {
    const { db } = stores;
    const target = await flag('roles');
    const roleId = randomUUID();
    await db.query('INSERT INTO roles (id, organization_id, name, feature_flags_access_level) VALUES ($1, $2, $3, 37)', [roleId, admin.organization_id, 'Eng']);

    await expect(grantRoleAccess(db, admin.organization_id, target.id, randomUUID())).rejects.toMatchObject({
      status: 400,
      attr: 'role_id',
      code: 'does_not_exist',
    });
    await expect(grantRoleAccess(db, randomUUID(), target.id, roleId)).rejects.toMatchObject({ status: 400, code: 'does_not_exist' });
    const granted = await grantRoleAccess(db, admin.organization_id, target.id, roleId);
    expect(granted).toMatchObject({ role_id: roleId });
    await expect(grantRoleAccess(db, admin.organization_id, target.id, roleId)).rejects.toMatchObject({ status: 400, code: 'unique' });

    expect(await findFlagRoleAccess(db, target.id, granted.id)).toEqual(granted);
    await expect(findFlagRoleAccess(db, target.id, null)).rejects.toMatchObject({ status: 404 });
    await expect(findFlagRoleAccess(db, target.id + 1000, granted.id)).rejects.toMatchObject({ status: 404 });
    await revokeRoleAccess(db, target.id, granted.id);
    await expect(revokeRoleAccess(db, target.id, granted.id)).rejects.toMatchObject({ status: 404 });
  });

  it("shows a flag with what loadFlagRelations loads: its cohorts' names, creator and the viewer's level", async () => {
    const { db } = stores;
    const cohortId = await insertCohort(db, 1, { isStatic: true });
    const id = await insertFlag(db, 1, {
      key: 'named-cohort',
      filters: {
        groups: [
          {
            properties: [
              { key: 'id', type: 'cohort', value: cohortId },
              { key: 'id', type: 'cohort', value: 999999 },
            ],
            rollout_percentage: 50,
          },
        ],
      },
    });
    await db.query('UPDATE feature_flags SET created_by_id = $2 WHERE id = $1', [id, admin.id]);
    const row = (await findFlag(db, 1, id))!;
    const shown = serializeFlag(row, await loadFlagRelations(db, [row], { userId: admin.id, teamId: 1 }), Date.now());
    expect(shown.filters['groups']).toEqual([
      {
        properties: [
          { key: 'id', type: 'cohort', value: cohortId, cohort_name: 'test cohort' },
          { key: 'id', type: 'cohort', value: 999999, cohort_name: null },
        ],
        rollout_percentage: 50,
      },
    ]);
    expect(shown).toMatchObject({ created_by: { id: admin.id }, user_access_level: 'manager', can_edit: true, experiment_set: [], analytics_dashboards: [] });
  });
});
