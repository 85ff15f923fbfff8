import type { Request } from 'express';
import { listProjectsFor, type PersonalKeyChange, type PersonalKeyRow } from '@sightline/accounts';
import { isKnownScope, type Principal } from '@sightline/auth';
import { errors } from '@sightline/http';
import type { MetadataStore, Sql } from '@sightline/postgres';
import { echoed, INT4_MAX } from '../http/drf-fields';
import { ignoredBody } from '../http/body-fields';
import { RouteTable } from '../http/route-registry';
import { changeKey, issueKey, listManageableKeys, removeKey, retrieveKey, rollKey, type KeysChanged } from './personal-api-keys.service';

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
 * The fields of a create or PATCH body, checked for what they name: scopes PostHog knows, projects
 * the caller may use, its own organisation (400 otherwise). Whether the caller may give them is the
 * service's check (403). An empty `scoped_teams` or `scoped_organizations` means no restriction.
 */
async function parseKeyChange(db: Sql, caller: Principal, body: Record<string, unknown>): Promise<PersonalKeyChange> {
  const change: PersonalKeyChange = {};
  if (body['label'] !== undefined) change.label = body['label'] as string;
  if (body['scopes'] !== undefined) {
    const scopes = [...new Set(body['scopes'] as string[])];
    scopes.forEach((scope, i) => {
      if (!isKnownScope(scope)) throw errors.validation(`Invalid scope: ${echoed(scope)}`, `scopes__${i}`, 'invalid');
    });
    if (scopes.includes('*') && scopes.length > 1) throw errors.validation('"*" cannot be combined with other scopes.', 'scopes', 'invalid');
    change.scopes = scopes;
  }
  if (body['scoped_teams'] !== undefined) {
    const teams = body['scoped_teams'] as number[] | null;
    const wanted = teams === null || teams.length === 0 ? null : [...new Set(teams)];
    const reachable = new Set((await listProjectsFor(db, caller)).map((p) => p.id));
    for (const id of wanted ?? []) if (!reachable.has(id)) throw errors.validation(`You do not have access to project ${id}.`, 'scoped_teams', 'invalid');
    change.scopedTeams = wanted;
  }
  if (body['scoped_organizations'] !== undefined) {
    const organizations = body['scoped_organizations'] as string[] | null;
    const wanted = organizations === null || organizations.length === 0 ? null : [...new Set(organizations.map((o) => o.toLowerCase()))];
    for (const id of wanted ?? [])
      if (id !== caller.organizationId.toLowerCase())
        throw errors.validation('You must be a member of all organizations that you are scoping the key to.', 'scoped_organizations', 'invalid');
    change.scopedOrganizations = wanted;
  }
  return change;
}

/**
 * `/api/personal_api_keys/`: the caller's user's keys. Reading needs `personal_api_key:read`,
 * issuing, changing, rolling and deleting `personal_api_key:write` (`*` has both); a key sees and
 * manages only itself and keys within its powers (the service). `@current` names the key making
 * the request. `keysChanged` hears every change, roll and deletion (the principal caches).
 */
export function createPersonalApiKeysRoutes(db: MetadataStore, keysChanged: KeysChanged): RouteTable {
  const base = '/api/personal_api_keys';
  const read = { scope: 'personal_api_key:read', projectRestrictedKeys: 'narrowed' } as const;
  const write = { scope: 'personal_api_key:write', projectRestrictedKeys: 'narrowed' } as const;
  /** `:key_id` as a key id: a number, or `@current` for the calling key; null names no key. */
  const keyIdOf = (req: Request): number | null => {
    const raw = String(req.params['key_id']);
    if (raw === '@current') return req.principal!.keyId;
    return /^\d{1,10}$/.test(raw) && Number(raw) <= INT4_MAX ? Number(raw) : null;
  };
  const requireKeyId = (req: Request): number => {
    const id = keyIdOf(req);
    if (id === null) throw errors.notFound();
    return id;
  };

  return new RouteTable()
    .get(base, { ...read, summary: "List the user's personal API keys within the caller's powers (masked)", list: true }, async (req, res) => {
      const keys = await listManageableKeys(db, req.principal!);
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
        const change = await parseKeyChange(db, req.principal!, req.body as Record<string, unknown>);
        const issued = await issueKey(db, req.principal!, {
          label: change.label!,
          scopes: change.scopes!,
          scopedTeams: change.scopedTeams,
          scopedOrganizations: change.scopedOrganizations,
        });
        res.status(201).json(serializePersonalKey(issued.key, issued.value));
      },
    )
    .get(`${base}/:key_id`, { ...read, summary: 'Retrieve a personal API key (masked); @current is the calling key' }, async (req, res) => {
      res.json(serializePersonalKey(await retrieveKey(db, req.principal!, requireKeyId(req))));
    })
    .patch(
      `${base}/:key_id`,
      {
        ...write,
        summary: "Change a key's label, scopes or restrictions",
        body: { type: 'object', properties: keyFields },
        example: () => ({ label: 'Renamed key' }),
      },
      async (req, res) => {
        const id = requireKeyId(req);
        const change = await parseKeyChange(db, req.principal!, req.body as Record<string, unknown>);
        res.json(serializePersonalKey(await changeKey(db, req.principal!, id, change, keysChanged)));
      },
    )
    .post(
      `${base}/:key_id/roll`,
      { ...write, summary: 'Give a key a new value; the old one stops working', body: ignoredBody, example: () => ({}) },
      async (req, res) => {
        const rolled = await rollKey(db, req.principal!, requireKeyId(req), keysChanged);
        res.json(serializePersonalKey(rolled.key, rolled.value));
      },
    )
    .delete(`${base}/:key_id`, { ...write, summary: 'Delete a personal API key' }, async (req, res) => {
      await removeKey(db, req.principal!, requireKeyId(req), keysChanged);
      res.status(204).end();
    });
}
