/** The role rules that left the roles route, on real PostgreSQL: unique names, level choices, members. */
import { randomUUID } from 'node:crypto';
import { createTestStores, type TestStores } from '@sightline/testkit';
import { addRoleMember, createRole } from './roles.service';

describe('roles service', () => {
  let stores: TestStores;
  let admin: { id: number; uuid: string; organization_id: string };

  beforeAll(async () => {
    stores = await createTestStores('rolesservice');
    [admin] = await stores.db.query<{ id: number; uuid: string; organization_id: string }>(
      'SELECT id, uuid::text AS uuid, organization_id FROM users ORDER BY id LIMIT 1',
    );
  });
  afterAll(() => stores.close());

  it('creates a role with the default level, refusing a name taken in any case and a level that is not a choice', async () => {
    const role = { organizationId: admin.organization_id, createdById: admin.id };
    expect(await createRole(stores.db, { ...role, name: 'Engineers', level: undefined })).toMatchObject({ name: 'Engineers', feature_flags_access_level: 37 });
    await expect(createRole(stores.db, { ...role, name: 'ENGINEERS', level: 21 })).rejects.toMatchObject({ status: 400, attr: 'name', code: 'unique' });
    await expect(createRole(stores.db, { ...role, name: 'Viewers', level: 99 })).rejects.toMatchObject({
      status: 400,
      attr: 'feature_flags_access_level',
      code: 'invalid_choice',
    });
    expect(await createRole(stores.db, { ...role, name: 'Viewers', level: 21 })).toMatchObject({ feature_flags_access_level: 21 });
  });

  it('adds a user of the organisation once', async () => {
    const role = await createRole(stores.db, { organizationId: admin.organization_id, createdById: admin.id, name: 'Members', level: 37 });
    await expect(addRoleMember(stores.db, admin.organization_id, role, randomUUID())).rejects.toMatchObject({ status: 400, detail: 'User does not exist.' });
    await expect(addRoleMember(stores.db, randomUUID(), role, admin.uuid)).rejects.toMatchObject({ detail: 'User does not exist.' });
    expect(await addRoleMember(stores.db, admin.organization_id, role, admin.uuid)).toMatchObject({ role_id: role.id, user_id: admin.id });
    await expect(addRoleMember(stores.db, admin.organization_id, role, admin.uuid)).rejects.toMatchObject({
      status: 400,
      detail: 'User is already part of the role.',
    });
  });
});
