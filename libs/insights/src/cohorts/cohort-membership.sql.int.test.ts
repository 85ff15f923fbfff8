/**
 * Cohort membership as ClickHouse (chdb, the server's engine) computes it from the tables the
 * worker and the API write: persons' latest versions (updated and deleted ones), distinct ids
 * that moved in a merge, and static members added, removed and re-added. The cohorts are read
 * from PostgreSQL by loadCohortsForQuery, so the whole path a query takes is exercised; every
 * expected set is worked out by hand from the rows below.
 */
import { createTestStores, type TestStores } from '@sightline/testkit';
import { QueryParams } from '@sightline/properties';
import { cohortMembershipSql, MAX_COHORT_NESTING, UnknownCohortError } from './cohort-membership.sql';
import { loadCohortsForQuery } from '../repositories/cohorts.repository';

const NOW = Date.parse('2024-01-10T15:00:00Z');
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
// Persons by their number; P7 belongs to project 2.
const P1 = uuid(1);
const P2 = uuid(2);
const P3 = uuid(3);
const P4 = uuid(4);
const P5 = uuid(5);
const P6 = uuid(6);
const P7 = uuid(7);

describe('cohort membership on ClickHouse', () => {
  let stores: TestStores;
  let otherTeam: number;
  const ids: Record<string, number> = {};

  const insertCohort = async (name: string, options: { isStatic?: boolean; properties?: unknown; deleted?: boolean; teamId?: number }) => {
    const [row] = await stores.db.query<{ id: number }>(
      'INSERT INTO cohorts (team_id, name, is_static, filters, deleted) VALUES ($1, $2, $3, $4, $5) RETURNING id',
      [
        options.teamId ?? 1,
        name,
        options.isStatic ?? false,
        options.properties ? JSON.stringify({ properties: options.properties }) : null,
        options.deleted ?? false,
      ],
    );
    ids[name] = row!.id;
    return row!.id;
  };
  const cohort = (name: string, extra: Record<string, unknown> = {}) => ({ key: 'id', value: ids[name], type: 'cohort', ...extra });
  const person = (key: string, value: unknown, operator = 'exact', extra: Record<string, unknown> = {}) => ({ key, value, operator, type: 'person', ...extra });

  beforeAll(async () => {
    stores = await createTestStores('cohortsql');
    const [org] = await stores.db.query<{ organization_id: string }>('SELECT organization_id FROM projects WHERE id = 1');
    otherTeam = (
      await stores.db.query<{ id: number }>(
        "INSERT INTO projects (uuid, organization_id, name, api_token) VALUES (gen_random_uuid(), $1, 'other', 'phc_cohortsql_other') RETURNING id",
        [org!.organization_id],
      )
    )[0]!.id;

    // Persons. The newer version of P2 and P3 is inserted first: the version decides, not the order.
    const personRow = (id: string, version: number, properties: Record<string, unknown>, extra: { deleted?: boolean; team?: number } = {}) => ({
      id,
      team_id: extra.team ?? 1,
      created_at: '2024-01-01 00:00:00',
      properties: JSON.stringify(properties),
      is_identified: 0,
      is_deleted: extra.deleted ? 1 : 0,
      version,
    });
    await stores.ch.insert({
      table: 'person',
      format: 'JSONEachRow',
      values: [
        personRow(P2, 3, { plan: 'free' }), // was pro at version 0
        personRow(P3, 2, { plan: 'pro', age: 40 }), // was free at version 0
        personRow(P1, 0, { plan: 'pro', country: 'US' }),
        personRow(P2, 0, { plan: 'pro' }),
        personRow(P3, 0, { plan: 'free' }),
        personRow(P4, 0, { plan: 'pro', age: 50 }),
        personRow(P4, 1, {}, { deleted: true }),
        personRow(P5, 0, { plan: 'enterprise', age: 20 }),
        personRow(P6, 0, {}),
        personRow(P7, 0, { plan: 'pro', age: 60 }, { team: otherTeam }),
      ],
    });
    // d6 was P6's until a merge moved it to P1 (version 1); d4 still points at the deleted P4.
    const distinct = (distinctId: string, personId: string, version: number, team = 1) => ({
      team_id: team,
      distinct_id: distinctId,
      person_id: personId,
      is_deleted: 0,
      version,
    });
    await stores.ch.insert({
      table: 'person_distinct_id2',
      format: 'JSONEachRow',
      values: [
        distinct('d1', P1, 0),
        distinct('d2', P2, 0),
        distinct('d3', P3, 0),
        distinct('d4', P4, 0),
        distinct('d5', P5, 0),
        distinct('d6', P6, 0),
        distinct('d6', P1, 1),
        distinct('d6b', P6, 0),
        distinct('d7', P7, 0, otherTeam),
      ],
    });

    // Cohorts in PostgreSQL, read back by loadCohortsForQuery.
    const staticId = await insertCohort('static', { isStatic: true });
    await insertCohort('pro', { properties: { type: 'OR', values: [{ type: 'AND', values: [person('plan', 'pro')] }] } });
    await insertCohort('older pro or enterprise', {
      properties: { type: 'OR', values: [{ type: 'AND', values: [person('plan', 'pro'), person('age', 30, 'gt')] }, person('plan', 'enterprise')] },
    });
    await insertCohort('static but not pro', { properties: { type: 'AND', values: [cohort('static'), person('plan', 'pro', 'is_not')] } });
    await insertCohort('not pro, not enterprise', {
      properties: { type: 'AND', values: [cohort('pro', { operator: 'not_in' }), person('plan', 'enterprise', 'exact', { negation: true })] },
    });
    await insertCohort('not over 30', { properties: { type: 'AND', values: [person('age', 30, 'gt', { negation: true })] } });
    await insertCohort('either', { properties: { type: 'OR', values: [cohort('older pro or enterprise'), cohort('static but not pro')] } });

    // Static members: P6 removed (a newer deleted row), P2 removed then added back, P3 only in project 2's copy.
    const member = (personId: string, version: number, deleted = 0, team = 1) => ({
      team_id: team,
      cohort_id: staticId,
      person_id: personId,
      is_deleted: deleted,
      version,
    });
    await stores.ch.insert({
      table: 'person_static_cohort',
      format: 'JSONEachRow',
      values: [member(P1, 1), member(P5, 1), member(P6, 1), member(P6, 2, 1), member(P2, 1), member(P2, 2, 1), member(P2, 3), member(P3, 1, 0, otherTeam)],
    });
  });
  afterAll(() => stores.close());

  /** The persons (by distinct id, as events reach them) that are members, EXPLAINed first. */
  async function members(name: string): Promise<string[]> {
    const definitions = await loadCohortsForQuery(stores.db, 1, [ids[name]!]);
    const params = new QueryParams();
    const team = params.add(1, 'Int64');
    const membership = cohortMembershipSql(ids[name]!, definitions, 'person_id', { params, teamParam: team, nowMs: NOW });
    const query = `SELECT DISTINCT toString(person_id) AS person FROM (
        SELECT distinct_id, argMax(person_id, version) AS person_id FROM person_distinct_id2 WHERE team_id = ${team}
        GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0)
      WHERE ${membership} ORDER BY person`;
    await (await stores.ch.query({ query: `EXPLAIN SYNTAX ${query}`, query_params: params.values, format: 'TabSeparated' })).text();
    await (await stores.ch.query({ query: `EXPLAIN PLAN ${query}`, query_params: params.values, format: 'TabSeparated' })).text();
    const rows = await (await stores.ch.query({ query, query_params: params.values, format: 'JSONEachRow' })).json<{ person: string }>();
    return rows.map((r) => r.person);
  }

  it.each<[string, string[]]>([
    // Latest rows: P1, P5 and P2 (re-added); P6's removal wins; P3 is a member in project 2 only.
    ['static', [P1, P2, P5]],
    // Latest properties: P2 is now free, P3 now pro, P4 is deleted, P7 is another project's.
    ['pro', [P1, P3]],
    // P3 (pro, 40) and P5 (enterprise); P1 is pro without an age.
    ['older pro or enterprise', [P3, P5]],
    // Static members not on pro: is_not also matches a missing plan.
    ['static but not pro', [P2, P5]],
    // Not in "pro" (P2, P5, P6) and a negated exact on enterprise: P6 has no plan, so it stays.
    ['not pro, not enterprise', [P2, P6]],
    // A negated "age > 30" keeps everyone without an age (NULL is no match, then negated).
    ['not over 30', [P1, P2, P5, P6]],
    // Dynamic cohorts inside a dynamic cohort: P3, P5 ∪ P2, P5.
    ['either', [P2, P3, P5]],
  ])('%s', async (name, expected) => {
    expect(await members(name)).toEqual(expected);
  });

  it('loads the cohorts a query names and the cohorts inside them, live ones of the project only', async () => {
    const deleted = await insertCohort('deleted', { isStatic: true, deleted: true });
    const theirs = await insertCohort('theirs', { isStatic: true, teamId: otherTeam });
    const wrapper = await insertCohort('wrapper', { properties: { type: 'AND', values: [cohort('either'), cohort('deleted'), cohort('theirs')] } });
    const loaded = await loadCohortsForQuery(stores.db, 1, [wrapper, 2_147_483_648, -1]);
    expect([...loaded.keys()].sort((a, b) => a - b)).toEqual(
      [wrapper, ids['either'], ids['older pro or enterprise'], ids['static but not pro'], ids['static']].sort((a, b) => a! - b!),
    );
    expect(loaded.get(ids['static']!)).toEqual({ id: ids['static'], name: 'static', isStatic: true, properties: null });
    expect(loaded.has(deleted) || loaded.has(theirs)).toBe(false);
    const params = new QueryParams();
    expect(() => cohortMembershipSql(wrapper, loaded, 'id', { params, teamParam: '{team:Int64}', nowMs: NOW })).toThrow(UnknownCohortError);
  });

  it(`stops loading after ${MAX_COHORT_NESTING} levels, so a deeper chain is refused as too deep`, async () => {
    let inner = await insertCohort('chain end', { isStatic: true });
    const chain = [inner];
    for (let i = 0; i < MAX_COHORT_NESTING + 2; i++) {
      inner = await insertCohort(`chain ${i}`, { properties: { type: 'AND', values: [{ key: 'id', value: inner, type: 'cohort' }] } });
      chain.unshift(inner);
    }
    const loaded = await loadCohortsForQuery(stores.db, 1, [chain[0]!]);
    expect([...loaded.keys()]).toEqual(chain.slice(0, MAX_COHORT_NESTING));
    let refusal: unknown;
    try {
      cohortMembershipSql(chain[0]!, loaded, 'id', { params: new QueryParams(), teamParam: '{team:Int64}', nowMs: NOW });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({ reason: 'too_deep', cohortId: chain[MAX_COHORT_NESTING] });
  });
});
