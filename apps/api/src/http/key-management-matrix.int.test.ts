/**
 * Key management × key powers: for every pair of keys (actor, target) over scopes × project
 * restriction (and two organisation-restricted actors), every key-management route (issue, list,
 * retrieve, PATCH, roll, DELETE) is tried by the actor on the target, and what comes out never holds
 * more than the actor: a key issued or rolled authenticates with at most the actor's powers, a key
 * changed ends with at most them, and a key holding more than the actor is never changed, rolled,
 * deleted or shown to it. "Powers" are modelled here on their own, as sets of (scope, place)
 * capabilities, so the test does not lean on the code it checks.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { findPrincipalByKeyHash } from '@sightline/accounts';
import { ALL_SCOPES, hashPersonalApiKey } from '@sightline/auth';
import { ADMIN_KEY, bearer, createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';

interface Powers {
  scopes: string[];
  teams: number[] | null;
  orgs: string[] | null;
}

/** Runs `work` over `items`, `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
}

describe('key management never yields more than the acting key holds', () => {
  let f: FlagFixture;
  let projectTwo: number;
  let profiles: Powers[];
  const counts = { pairs: 0, allowed: 0, refused: 0, requests: 0 };

  /** Every capability a key with these powers has: `<scope>@<place>`, places being projects, "every project" and organisations. */
  function capabilities(p: Powers): Set<string> {
    const scopes = new Set<string>();
    for (const scope of p.scopes) {
      if (scope === '*') ['*', ...ALL_SCOPES].forEach((s) => scopes.add(s));
      else {
        scopes.add(scope);
        if (scope.endsWith(':write')) scopes.add(scope.replace(/:write$/, ':read'));
      }
    }
    // No project restriction reaches projects created later and organisation-level routes too;
    // no organisation restriction reaches organisations the user may belong to later.
    const places = [
      ...(p.teams === null ? ['project:1', `project:${projectTwo}`, 'project:later', 'organization-level'] : p.teams.map((id) => `project:${id}`)),
      ...(p.orgs === null ? [`org:${f.organizationId}`, 'org:later'] : p.orgs.map((id) => `org:${id.toLowerCase()}`)),
    ];
    const out = new Set<string>();
    for (const scope of scopes) for (const place of places) out.add(`${scope}@${place}`);
    return out;
  }
  const within = (target: Powers, actor: Powers) => {
    const held = capabilities(actor);
    return [...capabilities(target)].every((c) => held.has(c));
  };
  const holds = (p: Powers, scope: string) =>
    p.scopes.includes('*') || p.scopes.includes(scope) || (scope.endsWith(':read') && p.scopes.includes(scope.replace(':read', ':write')));

  /** Keys of the admin user with exactly these powers, straight into the store (one statement per 200). */
  async function addKeys(wanted: readonly Powers[], label = 'matrix'): Promise<{ id: number; value: string; secure: string }[]> {
    const out: { id: number; value: string; secure: string }[] = [];
    for (let i = 0; i < wanted.length; i += 200) {
      const chunk = wanted.slice(i, i + 200).map((p) => ({ p, value: `phx_km_${randomUUID().replace(/-/g, '')}` }));
      const params: unknown[] = [];
      const rows = chunk.map(({ p, value }) => {
        params.push(f.adminUserId, label, hashPersonalApiKey(value), p.scopes, p.teams, p.orgs);
        const n = params.length;
        return `($${n - 5}::int, $${n - 4}, $${n - 3}, 'phx_km...trix', $${n - 2}::text[], $${n - 1}::int[], $${n}::text[])`;
      });
      const ids = await f.db.query<{ id: number }>(
        `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, scoped_teams, scoped_organizations) VALUES ${rows.join(', ')} RETURNING id`,
        params,
      );
      chunk.forEach(({ value }, j) => out.push({ id: ids[j]!.id, value, secure: hashPersonalApiKey(value) }));
    }
    return out;
  }
  const addKey = async (p: Powers, label = 'matrix') => (await addKeys([p], label))[0]!;
  async function stored(id: number): Promise<(Powers & { secure: string }) | null> {
    const [row] = await f.db.query<{ scopes: string[]; scoped_teams: number[] | null; scoped_organizations: string[] | null; secure_value: string }>(
      'SELECT scopes, scoped_teams, scoped_organizations, secure_value FROM personal_api_keys WHERE id = $1',
      [id],
    );
    return row ? { scopes: row.scopes, teams: row.scoped_teams, orgs: row.scoped_organizations, secure: row.secure_value } : null;
  }
  /** The powers a key value authenticates with. */
  async function powersOfValue(value: string): Promise<Powers> {
    const principal = await findPrincipalByKeyHash(f.db, hashPersonalApiKey(value));
    if (!principal) throw new Error('an issued or rolled value does not authenticate');
    return { scopes: principal.scopes, teams: principal.scopedTeams, orgs: principal.scopedOrganizations ?? null };
  }
  const send = (method: 'get' | 'post' | 'patch' | 'delete', path: string, key: string, body?: object) => {
    counts.requests++;
    const req = request(f.app)[method](path).set(bearer(key));
    return body === undefined ? req : req.send(body);
  };
  const describePair = (actor: Powers, target: Powers) => `actor ${JSON.stringify(actor)} target ${JSON.stringify(target)}`;
  /** A body giving a key these powers (absent restrictions left out, as a client would). */
  const bodyFor = (p: Powers) => ({
    scopes: p.scopes,
    ...(p.teams === null ? {} : { scoped_teams: p.teams }),
    ...(p.orgs === null ? {} : { scoped_organizations: p.orgs }),
  });

  beforeAll(async () => {
    f = await createFlagFixture('keymatrix', () => Date.parse('2024-01-10T15:00:00Z'));
    const created = await request(f.app).post('/api/projects/').set(bearer(ADMIN_KEY)).send({ name: 'Key matrix two' });
    projectTwo = created.body.id as number;
    const scopeSets = [['*'], ['personal_api_key:write'], ['personal_api_key:write', 'insight:read'], ['personal_api_key:read', 'insight:write']];
    const teamSets = [null, [1], [projectTwo]];
    profiles = scopeSets.flatMap((scopes) => teamSets.map((teams) => ({ scopes, teams, orgs: null })));
    profiles.push({ scopes: ['*'], teams: null, orgs: [f.organizationId] });
    profiles.push({ scopes: ['personal_api_key:write', 'insight:read'], teams: [1], orgs: [f.organizationId] });
  });
  afterAll(async () => {
    await f.close();
    process.stdout.write(`key management matrix: ${profiles.length} profiles; ${JSON.stringify(counts)}\n`);
  });

  it('lists and retrieves only keys within the actor, and never a value', async () => {
    const targets = (await addKeys(profiles, 'listed')).map((key, i) => ({ ...key, powers: profiles[i]! }));
    const actors = await addKeys(profiles, 'lister');
    for (const [a, actorPowers] of profiles.entries()) {
      const actor = actors[a]!;
      const list = await send('get', '/api/personal_api_keys/', actor.value);
      if (!holds(actorPowers, 'personal_api_key:read')) {
        expect([list.status, list.body.code]).toEqual([403, 'permission_denied']);
        continue;
      }
      expect(list.status).toBe(200);
      expect(list.text).not.toMatch(/"value"/);
      const listed = new Set((list.body.results as { id: number }[]).map((k) => k.id));
      for (const target of targets) {
        const allowed = within(target.powers, actorPowers);
        expect([describePair(actorPowers, target.powers), listed.has(target.id)]).toEqual([describePair(actorPowers, target.powers), allowed]);
        const one = await send('get', `/api/personal_api_keys/${target.id}/`, actor.value);
        expect([describePair(actorPowers, target.powers), one.status]).toEqual([describePair(actorPowers, target.powers), allowed ? 200 : 403]);
      }
      // Itself, always.
      expect(listed.has(actor.id)).toBe(true);
      expect((await send('get', '/api/personal_api_keys/@current/', actor.value)).status).toBe(200);
    }
  });

  it('issues, changes, rolls and deletes only within the actor, for every pair of keys', async () => {
    const actors = await addKeys(profiles, 'actor');
    const pairs = profiles.flatMap((actorPowers, a) => profiles.map((targetPowers) => ({ actorPowers, actor: actors[a]!, targetPowers })));
    // Per pair, fresh targets: one to roll, one per change, one to delete.
    const changesFor = (actorPowers: Powers, targetPowers: Powers): { name: string; body: object; result: Powers }[] => [
      { name: 'label', body: { label: 'renamed' }, result: targetPowers },
      { name: 'lift projects', body: { scoped_teams: [] }, result: { ...targetPowers, teams: null } },
      { name: 'grant *', body: { scopes: ['*'] }, result: { ...targetPowers, scopes: ['*'] } },
      {
        name: "the actor's powers",
        body: { scopes: actorPowers.scopes, scoped_teams: actorPowers.teams ?? [], scoped_organizations: actorPowers.orgs ?? [] },
        result: actorPowers,
      },
    ];
    const perPair = 2 + changesFor(profiles[0]!, profiles[0]!).length;
    const targets = await addKeys(pairs.flatMap((pair) => Array<Powers>(perPair).fill(pair.targetPowers)));
    const tally = (ok: boolean) => (ok ? counts.allowed++ : counts.refused++);

    await inBatches(
      pairs.map((pair, i) => ({ ...pair, targets: targets.slice(i * perPair, (i + 1) * perPair) })),
      16,
      async ({ actorPowers, actor, targetPowers, targets: [rollTarget, doomed, ...changeTargets] }) => {
        counts.pairs++;
        const pair = describePair(actorPowers, targetPowers);
        const targetWithin = holds(actorPowers, 'personal_api_key:write') && within(targetPowers, actorPowers);
        const unchanged = (key: { secure: string }) => ({ ...targetPowers, secure: key.secure });

        // Issue a key with the target's powers.
        const issued = await send('post', '/api/personal_api_keys/', actor.value, { label: 'issued', ...bodyFor(targetPowers) });
        if (issued.status === 201) {
          const got = await powersOfValue(issued.body.value as string);
          if (!within(got, actorPowers)) throw new Error(`issued beyond the actor: ${pair} got ${JSON.stringify(got)}`);
        } else if (![400, 403].includes(issued.status) || issued.body.value !== undefined) throw new Error(`issue: ${pair}: ${issued.status} ${issued.text}`);
        expect([pair, 'issue', issued.status === 201]).toEqual([pair, 'issue', targetWithin]);
        tally(issued.status === 201);

        // Roll the target.
        const rolled = await send('post', `/api/personal_api_keys/${rollTarget!.id}/roll/`, actor.value, {});
        if (rolled.status === 200) {
          const got = await powersOfValue(rolled.body.value as string);
          if (!within(got, actorPowers)) throw new Error(`rolled beyond the actor: ${pair}`);
        } else {
          expect([pair, rolled.status, rolled.body.value]).toEqual([pair, 403, undefined]);
          expect(await stored(rollTarget!.id)).toEqual(unchanged(rollTarget!));
        }
        expect([pair, 'roll', rolled.status === 200]).toEqual([pair, 'roll', targetWithin]);
        tally(rolled.status === 200);

        // Change the target: a label only, lift its project restriction, grant `*`, give it all of the actor's powers.
        const changes = changesFor(actorPowers, targetPowers);
        for (const [i, change] of changes.entries()) {
          const target = changeTargets[i]!;
          const res = await send('patch', `/api/personal_api_keys/${target.id}/`, actor.value, change.body);
          const after = await stored(target.id);
          if (res.status === 200) {
            if (!within(after!, actorPowers)) throw new Error(`changed beyond the actor: ${pair} ${change.name}`);
          } else {
            expect([pair, change.name, res.status]).toEqual([pair, change.name, 403]);
            expect(after).toEqual(unchanged(target));
          }
          const expected = targetWithin && within(change.result, actorPowers);
          expect([pair, change.name, res.status === 200]).toEqual([pair, change.name, expected]);
          tally(res.status === 200);
        }

        // Delete the target.
        const deleted = await send('delete', `/api/personal_api_keys/${doomed!.id}/`, actor.value);
        if (deleted.status !== 204) {
          expect([pair, deleted.status]).toEqual([pair, 403]);
          expect(await stored(doomed!.id)).toEqual(unchanged(doomed!));
        } else expect(await stored(doomed!.id)).toBeNull();
        expect([pair, 'delete', deleted.status === 204]).toEqual([pair, 'delete', targetWithin]);
        tally(deleted.status === 204);
      },
    );
    expect(counts.pairs).toBe(profiles.length ** 2);
    expect(counts.allowed).toBeGreaterThan(100);
    expect(counts.refused).toBeGreaterThan(100);
  });

  it('lets a key roll and narrow itself, never widen itself', async () => {
    for (const powers of profiles.filter((p) => holds(p, 'personal_api_key:write'))) {
      const self = await addKey(powers, 'self');
      for (const body of [{ scoped_teams: [] }, { scopes: ['*'] }, { scoped_organizations: [] }]) {
        const widened = {
          ...powers,
          ...('scopes' in body ? { scopes: ['*'] } : {}),
          ...('scoped_teams' in body ? { teams: null } : {}),
          ...('scoped_organizations' in body ? { orgs: null } : {}),
        };
        const res = await send('patch', '/api/personal_api_keys/@current/', self.value, body);
        expect([JSON.stringify(powers), body, res.status === 200]).toEqual([JSON.stringify(powers), body, within(widened, powers)]);
        const now = await stored(self.id);
        expect(within(now!, powers)).toBe(true);
      }
      const rolled = await send('post', '/api/personal_api_keys/@current/roll/', self.value, {});
      expect(rolled.status).toBe(200);
      expect(within(await powersOfValue(rolled.body.value as string), powers)).toBe(true);
      const narrowed = await send('patch', '/api/personal_api_keys/@current/', rolled.body.value as string, { scopes: ['personal_api_key:write'] });
      expect([narrowed.status, narrowed.body.scopes]).toEqual([200, ['personal_api_key:write']]);
    }
  });
});
