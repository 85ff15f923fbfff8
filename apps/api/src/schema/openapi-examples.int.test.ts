import request from 'supertest';
import { insertEvents } from '@sightline/clickhouse';
import { createTestPerson, insertGroupType, testEventRow } from '@sightline/testkit';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';
import type { OpenApiDocument } from './openapi-document';

/** The all-zero UUID the document's examples put where an object of the caller's own goes. */
const PLACEHOLDER_UUID = '00000000-0000-0000-0000-000000000000';

interface Operation {
  method: 'post' | 'put' | 'patch';
  path: string;
  example: unknown;
  creates: boolean;
}

/** Every request-body example of the document, in document order. */
function examplesOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const method of ['post', 'put', 'patch'] as const) {
      const operation = methods[method] as
        { requestBody?: { content?: Record<string, { example?: unknown }> }; responses?: Record<string, unknown> } | undefined;
      const example = operation?.requestBody?.content?.['application/json']?.example;
      if (example === undefined || !path.startsWith('/api/')) continue;
      operations.push({ method, path, example, creates: operation!.responses?.['201'] !== undefined });
    }
  }
  return operations;
}

/**
 * Every example body in GET /api/schema/ is one its route accepts (2xx). Path parameters name
 * objects made here first; a placeholder UUID in a body stands for the matching object of ours.
 * Creations run first, each undone after it, so the examples that share a name (both URL
 * prefixes of a project) each create; changes run on objects made after them; the examples that
 * spend something (rolling a key, resetting the project token, deleting persons) run last.
 */
describe('the OpenAPI document’s examples', () => {
  let f: FlagFixture;
  const admin = bearer(ADMIN_KEY);
  beforeAll(async () => {
    f = await createFlagFixture('openapi_examples', Date.now);
  });
  afterAll(() => f.close());

  it('are each accepted by their route', async () => {
    const document = (await request(f.app).get('/api/schema/')).body as OpenApiDocument;
    const operations = examplesOf(document);
    expect(operations.length).toBeGreaterThan(40);
    const ids: Record<string, string> = { project_id: '1', organization_id: '@current' };
    const colleague = await f.addUser('examples-colleague@example.com');
    const standIns: Record<string, () => string | undefined> = {
      user_uuid: () => colleague.uuid,
      role_id: () => ids['role_id'],
      person_id: () => ids['person_uuid'],
      person_ids: () => ids['person_uuid'],
    };
    /** The example with each placeholder UUID replaced by our object of the field it is in. */
    const bodyFor = (example: unknown, field = ''): unknown => {
      if (example === PLACEHOLDER_UUID) return standIns[field]?.() ?? example;
      if (Array.isArray(example)) return example.map((item) => bodyFor(item, field));
      if (example && typeof example === 'object') return Object.fromEntries(Object.entries(example).map(([k, v]) => [k, bodyFor(v, k)]));
      return example;
    };
    // A definition route's {id} is a definition of its own kind, not the flag the other {id}s name.
    const definitionId = (path: string) =>
      path.includes('/property_definitions/') ? ids['property_definition_id'] : path.includes('/event_definitions/') ? ids['event_definition_id'] : undefined;
    const urlOf = (path: string) =>
      path.replace(/\{([a-z_]+)\}/g, (_, name: string) => (name === 'id' ? definitionId(path) : undefined) ?? ids[name] ?? `missing-${name}`);
    const failures: unknown[] = [];
    const send = async (operation: Operation) => {
      const res = await request(f.app)
        [operation.method](urlOf(operation.path))
        .set(admin)
        .send(bodyFor(operation.example) as object);
      if (res.status >= 300) failures.push([operation.method, operation.path, res.status, res.body]);
      return res;
    };

    // 1. The objects the other examples act on, then the creations, each undone (soft delete
    //    where the resource has one, else DELETE).
    const made = async (path: string, body: object) => {
      const res = await request(f.app).post(path).set(admin).send(body);
      expect([path, res.status]).toEqual([path, 201]);
      return String(res.body.id);
    };
    ids['role_id'] = await made('/api/organizations/@current/roles/', { name: 'Examples role' });
    ids['action_id'] = await made('/api/projects/1/actions/', { name: 'Examples action' });
    ids['dashboard_id'] = await made('/api/projects/1/dashboards/', { name: 'Examples dashboard' });
    ids['cohort_id'] = await made('/api/projects/1/cohorts/', { name: 'Examples cohort', is_static: true });
    ids['insight_id'] = await made('/api/projects/1/insights/', { name: 'Examples insight' });
    ids['event_definition_id'] = await made('/api/projects/1/event_definitions/', { name: 'examples_event' });
    const [definition] = await f.db.query<{ id: number }>(
      "INSERT INTO property_definitions (team_id, name, type) VALUES (1, 'examples_property', 1) RETURNING id",
    );
    ids['property_definition_id'] = String(definition!.id);
    let flags = 0;
    /** A flag of its own, with the events its enriched usage dashboard looks for. */
    const freshFlag = async () => {
      const key = `examples-flag-${++flags}`;
      ids['id'] = await made('/api/projects/1/feature_flags/', { key, filters: { groups: [{ properties: [], rollout_percentage: 50 }] } });
      ids['feature_flag_id'] = ids['id'];
      await insertEvents(f.ch, [testEventRow({ event: '$feature_view', atMs: Date.now() - 60_000, properties: { feature_flag: key } })]);
    };
    await freshFlag();
    const key = await request(f.app)
      .post('/api/personal_api_keys/')
      .set(admin)
      .send({ label: 'Examples key', scopes: ['*'] });
    ids['key_id'] = String(key.body.id);
    // The group type the group-type examples name (index 0).
    await insertGroupType(f.db, 1, 'organization', 0);
    const person = await createTestPerson(f, { distinctIds: ['user-1', 'examples-anon'], properties: { plan: 'free' } });
    ids['person_id'] = String(person.id);
    ids['person_uuid'] = person.uuid;

    for (const operation of operations.filter((o) => o.creates)) {
      const res = await send(operation);
      if (res.status !== 201 || res.body?.id === undefined) continue;
      const item = `${urlOf(operation.path)}${res.body.id}/`;
      const undone = await request(f.app).patch(item).set(admin).send({ deleted: true });
      if (undone.status >= 300) await request(f.app).delete(item).set(admin);
    }

    // 2. Changes (a flag's one-time actions each on a flag of its own), then 3. what spends its object.
    const spends = (o: Operation) => /\/(roll|reset_token|bulk_delete|split)\/$/.test(o.path);
    const oneTime = (o: Operation) => /\/feature_flags\/\{id\}\/(dashboard|enrich_usage_dashboard|create_static_cohort_for_flag)\/$/.test(o.path);
    for (const operation of operations.filter((o) => !o.creates && !spends(o))) {
      if (oneTime(operation)) await freshFlag();
      await send(operation);
    }
    let splits = 0;
    for (const operation of operations.filter((o) => !o.creates && spends(o))) {
      if (/\/(split|bulk_delete)\/$/.test(operation.path)) {
        // Each needs a person of its own holding the example's distinct id (and another).
        await f.db.query("DELETE FROM person_distinct_ids WHERE team_id = 1 AND distinct_id = 'user-1'");
        const subject = await createTestPerson(f, { distinctIds: [`examples-${++splits}`, 'user-1'] });
        ids['person_id'] = String(subject.id);
      }
      await send(operation);
    }
    expect(failures).toEqual([]);
  });
});
