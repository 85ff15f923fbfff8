import type { RequestHandler } from 'express';
import {
  deletePersonalKey,
  findPersonalKey,
  issuePersonalKey,
  listPersonalKeys,
  listProjectsFor,
  reissuePersonalKey,
  updatePersonalKey,
  type PersonalKeyChange,
  type PersonalKeyRow,
} from '@sightline/accounts';
import { hasScope, isKnownScope, type Principal, type Scope } from '@sightline/auth';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { echoed, INT4_MAX } from '../http/drf-fields';
import { RouteTable } from '../http/route-registry';

declare module 'express-serve-static-core' {
  interface Request {
    personalKey?: PersonalKeyRow;
  }
}

/** PostHog's PersonalAPIKey.label max_length. */
const MAX_LABEL_LENGTH = 40;

export function serializePersonalKey(key: PersonalKeyRow, value?: string) {
  return {
    id: key.id,
    label: key.label,
    ...(value === undefined ? {} : { value }),
    mask_value: key.mask_value,
    created_at: new Date(key.created_at).toISOString(),
    last_used_at: key.last_used_at === null ? null : new Date(key.last_used_at).toISOString(),
    last_rolled_at: key.last_rolled_at === null ? null : new Date(key.last_rolled_at).toISOString(),
    user_id: key.user_id,
    scopes: key.scopes,
    scoped_teams: key.scoped_teams ?? [],
    scoped_organizations: key.scoped_organizations ?? [],
  };
}

const keyFields = {
  label: { type: 'string', minLength: 1, maxLength: MAX_LABEL_LENGTH },
  scopes: { type: 'array', minItems: 1, maxItems: 200, items: { type: 'string', maxLength: 100 } },
  scoped_teams: { type: ['array', 'null'], maxItems: 1000, items: { type: 'integer', minimum: 1, maximum: INT4_MAX } },
  scoped_organizations: { type: ['array', 'null'], maxItems: 100, items: { type: 'string', maxLength: 100 } },
};

/**
 * The scopes and restrictions a key may be given by the key making the request: only scopes PostHog
 * knows, none the caller lacks, projects of the caller's organisation it may use, and its own
 * organisation; a caller restricted to projects or organisations hands on at most that.
 */
async function checkGrant(db: Sql, caller: Principal, body: Record<string, unknown>): Promise<PersonalKeyChange> {
  const change: PersonalKeyChange = {};
  if (body['label'] !== undefined) change.label = body['label'] as string;
  if (body['scopes'] !== undefined) {
    const scopes = [...new Set(body['scopes'] as string[])];
    scopes.forEach((scope, i) => {
      if (!isKnownScope(scope)) throw errors.validation(`Invalid scope: ${echoed(scope)}`, `scopes__${i}`, 'invalid');
      const granted = scope === '*' ? caller.scopes.includes('*') : hasScope(caller.scopes, scope as Scope);
      if (!granted) throw errors.permissionDenied(`A key cannot grant the scope '${echoed(scope)}', which it does not have itself.`);
    });
    if (scopes.includes('*') && scopes.length > 1) throw errors.validation('"*" cannot be combined with other scopes.', 'scopes', 'invalid');
    change.scopes = scopes;
  }
  if (body['scoped_teams'] !== undefined) {
    const teams = body['scoped_teams'] as number[] | null;
    const wanted = teams === null || teams.length === 0 ? null : [...new Set(teams)];
    const reachable = new Set((await listProjectsFor(db, caller)).map((p) => p.id));
    if (wanted === null && caller.scopedTeams !== null) throw errors.permissionDenied('A key restricted to projects can only issue keys restricted to them.');
    for (const id of wanted ?? []) if (!reachable.has(id)) throw errors.validation(`You do not have access to project ${id}.`, 'scoped_teams', 'invalid');
    change.scopedTeams = wanted;
  }
  if (body['scoped_organizations'] !== undefined) {
    const organizations = body['scoped_organizations'] as string[] | null;
    const wanted = organizations === null || organizations.length === 0 ? null : [...new Set(organizations.map((o) => o.toLowerCase()))];
    if (wanted === null && (caller.scopedOrganizations ?? null) !== null)
      throw errors.permissionDenied('A key restricted to organizations can only issue keys restricted to them.');
    for (const id of wanted ?? [])
      if (id !== caller.organizationId.toLowerCase())
        throw errors.validation('You must be a member of all organizations that you are scoping the key to.', 'scoped_organizations', 'invalid');
    change.scopedOrganizations = wanted;
  }
  return change;
}

/**
 * `/api/personal_api_keys/`: the caller's user's keys. Reading needs `personal_api_key:read`,
 * issuing, changing, rolling and deleting `personal_api_key:write` (`*` has both). `@current` names
 * the key making the request.
 */
export function createPersonalApiKeysRoutes(db: Sql): RouteTable {
  const base = '/api/personal_api_keys';
  const read = { scope: 'personal_api_key:read' } as const;
  const write = { scope: 'personal_api_key:write' } as const;
  const loadKey: RequestHandler = async (req, _res, next) => {
    const raw = String(req.params['key_id']);
    const principal = req.principal!;
    const id = raw === '@current' ? principal.keyId : /^\d{1,10}$/.test(raw) && Number(raw) <= INT4_MAX ? Number(raw) : null;
    const key = id === null ? null : await findPersonalKey(db, principal.userId, id);
    if (!key) return next(errors.notFound());
    req.personalKey = key;
    next();
  };

  return new RouteTable()
    .get(base, { ...read, summary: "List the user's personal API keys (masked)", list: true }, async (req, res) => {
      const keys = await listPersonalKeys(db, req.principal!.userId);
      res.json({ count: keys.length, next: null, previous: null, results: keys.map((k) => serializePersonalKey(k)) });
    })
    .post(
      base,
      {
        ...write,
        summary: 'Issue a personal API key (the value is in this answer only)',
        body: { type: 'object', required: ['label', 'scopes'], properties: keyFields },
        example: () => ({ label: 'Key reader', scopes: ['personal_api_key:read'], scoped_teams: [1] }),
      },
      async (req, res) => {
        const change = await checkGrant(db, req.principal!, req.body as Record<string, unknown>);
        const issued = await issuePersonalKey(db, {
          userId: req.principal!.userId,
          label: change.label!,
          scopes: change.scopes!,
          scopedTeams: change.scopedTeams,
          scopedOrganizations: change.scopedOrganizations,
        });
        res.status(201).json(serializePersonalKey(issued.key, issued.value));
      },
    )
    .get(`${base}/:key_id`, { ...read, summary: 'Retrieve a personal API key (masked); @current is the calling key' }, loadKey, (req, res) => {
      res.json(serializePersonalKey(req.personalKey!));
    })
    .patch(
      `${base}/:key_id`,
      {
        ...write,
        summary: "Change a key's label, scopes or restrictions",
        body: { type: 'object', properties: keyFields },
        example: () => ({ label: 'Renamed key' }),
      },
      loadKey,
      async (req, res) => {
        const change = await checkGrant(db, req.principal!, req.body as Record<string, unknown>);
        const updated = await updatePersonalKey(db, req.principal!.userId, req.personalKey!.id, change);
        if (!updated) throw errors.notFound();
        res.json(serializePersonalKey(updated));
      },
    )
    .post(
      `${base}/:key_id/roll`,
      { ...write, summary: 'Give a key a new value; the old one stops working', example: () => ({}) },
      loadKey,
      async (req, res) => {
        const rolled = await reissuePersonalKey(db, req.principal!.userId, req.personalKey!.id);
        if (!rolled) throw errors.notFound();
        res.json(serializePersonalKey(rolled.key, rolled.value));
      },
    )
    .delete(`${base}/:key_id`, { ...write, summary: 'Delete a personal API key' }, loadKey, async (req, res) => {
      await deletePersonalKey(db, req.principal!.userId, req.personalKey!.id);
      res.status(204).end();
    });
}
