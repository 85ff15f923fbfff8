/** putAccessControl on real PostgreSQL: whom a rule may name, and one rule per subject. */
import { randomUUID } from 'node:crypto';
import { createTestStores, type TestStores } from '@sightline/testkit';
import { controlsFor } from './access-controls.repository';
import { putAccessControl, type AccessControlScope } from './access-controls.service';

describe('putAccessControl', () => {
  let stores: TestStores;
  let scope: AccessControlScope;
  let admin: { id: number; uuid: string; organization_id: string };

  beforeAll(async () => {
    stores = await createTestStores('accesscontrols');
    [admin] = await stores.db.query<{ id: number; uuid: string; organization_id: string }>(
      'SELECT id, uuid::text AS uuid, organization_id FROM users ORDER BY id LIMIT 1',
    );
    scope = { organizationId: admin.organization_id, teamId: 1, resource: 'feature_flag', resourceId: '5', actorId: admin.id };
  });
  afterAll(() => stores.close());

  it("refuses a role or member outside the caller's organisation", async () => {
    const otherOrgRole = randomUUID();
    await expect(putAccessControl(stores.db, scope, { level: 'viewer', roleRef: otherOrgRole, memberRef: null })).rejects.toMatchObject({
      status: 400,
      attr: 'role',
      code: 'does_not_exist',
    });
    await expect(
      putAccessControl(stores.db, { ...scope, organizationId: randomUUID() }, { level: 'viewer', roleRef: null, memberRef: admin.uuid }),
    ).rejects.toMatchObject({
      status: 400,
      attr: 'organization_member',
    });
    expect(await controlsFor(stores.db, 1, 'feature_flag', '5')).toEqual([]);
  });

  it('keeps one rule per subject: a second PUT changes its level, a null level removes it', async () => {
    const roleId = randomUUID();
    await stores.db.query('INSERT INTO roles (id, organization_id, name, feature_flags_access_level) VALUES ($1, $2, $3, 37)', [
      roleId,
      admin.organization_id,
      'Ops',
    ]);
    const first = await putAccessControl(stores.db, scope, { level: 'viewer', roleRef: roleId, memberRef: null });
    expect(first).toMatchObject({ access_level: 'viewer', role_id: roleId, user_uuid: null, resource_id: '5', created_by_id: admin.id });
    const member = await putAccessControl(stores.db, scope, { level: 'manager', roleRef: null, memberRef: admin.uuid });
    expect(member).toMatchObject({ access_level: 'manager', role_id: null, user_uuid: admin.uuid });
    const changed = await putAccessControl(stores.db, scope, { level: 'none', roleRef: roleId, memberRef: null });
    expect(changed).toMatchObject({ id: first!.id, access_level: 'none' });
    expect(await putAccessControl(stores.db, scope, { level: null, roleRef: roleId, memberRef: null })).toBeNull();
    expect((await controlsFor(stores.db, 1, 'feature_flag', '5')).map((c) => c.id)).toEqual([member!.id]);
  });
});
