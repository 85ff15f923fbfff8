import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import type { Sql } from '@sightline/postgres';
import { absoluteUrlWith } from '../http/pagination';

/** One field-level difference, as PostHog's activity log stores it. */
export interface Change {
  type: string;
  action: 'created' | 'changed' | 'deleted';
  field: string;
  before: unknown;
  after: unknown;
}

export interface ActivityDetail {
  id?: string | null;
  changes: Change[] | null;
  merge?: unknown;
  trigger?: unknown;
  name: string | null;
  short_id?: string | null;
  type?: string | null;
}

const isEmpty = (v: unknown) => v === null || v === undefined;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Field-level diff between two versions of an object (PostHog's changes_between): a
 * value appearing is "created", disappearing "deleted", otherwise "changed". With no
 * previous version every non-empty field is reported as created.
 */
export function changesBetween(type: string, before: Record<string, unknown> | null, after: Record<string, unknown>, fields: readonly string[]): Change[] {
  const changes: Change[] = [];
  for (const field of fields) {
    const left = before ? before[field] : null;
    const right = after[field];
    if (same(left, right) || (isEmpty(left) && isEmpty(right))) continue;
    const action = isEmpty(left) ? 'created' : isEmpty(right) ? 'deleted' : 'changed';
    changes.push({ type, action, field, before: left ?? null, after: right ?? null });
  }
  return changes;
}

export async function recordActivity(
  db: Sql,
  entry: { teamId: number; organizationId: string; userId: number | null; scope: string; itemId: string | number; activity: string; detail: ActivityDetail },
): Promise<void> {
  const detail = { id: null, merge: null, trigger: null, short_id: null, type: null, ...entry.detail };
  await db.query(
    `INSERT INTO activity_log (id, team_id, organization_id, user_id, is_system, scope, item_id, activity, detail)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      randomUUID(),
      entry.teamId,
      entry.organizationId,
      entry.userId,
      entry.userId === null,
      entry.scope,
      String(entry.itemId),
      entry.activity,
      JSON.stringify(detail),
    ],
  );
}

interface ActivityRow {
  id: string;
  is_system: boolean;
  activity: string;
  scope: string;
  item_id: string;
  detail: ActivityDetail;
  created_at: Date;
  first_name: string | null;
  email: string | null;
}

/**
 * One page of a scope's activity, newest first, in PostHog's activity page shape:
 * `page` is 1-based, `limit` defaults to 10, links are absolute.
 */
export async function activityPage(
  db: Sql,
  req: Request,
  /** `excludedItemIds`: items the caller may not see (flags with access "none"). */
  query: { teamId: number; scope: string; itemId?: string; excludedItemIds?: readonly string[]; limit: number; page: number },
) {
  const { teamId, scope, itemId, limit, page } = query;
  const where = `a.team_id = $1 AND a.scope = $2 AND ($3::text IS NULL OR a.item_id = $3) AND NOT (a.item_id = ANY($4::text[]))`;
  const params = [teamId, scope, itemId ?? null, query.excludedItemIds ?? []];
  const [rows, total] = await Promise.all([
    db.query<ActivityRow>(
      `SELECT a.id, a.is_system, a.activity, a.scope, a.item_id, a.detail, a.created_at, u.first_name, u.email
         FROM activity_log a LEFT JOIN users u ON u.id = a.user_id
        WHERE ${where} ORDER BY a.created_at DESC, a.id LIMIT $5 OFFSET $6`,
      [...params, limit, (page - 1) * limit],
    ),
    db.query<{ n: string }>(`SELECT count(*) AS n FROM activity_log a WHERE ${where}`, params),
  ]);
  const totalCount = Number(total[0]?.n ?? 0);
  return {
    results: rows.map((r) => ({
      id: r.id,
      user: r.is_system ? { first_name: 'System', email: null, is_system: true } : { first_name: r.first_name, email: r.email },
      unread: false,
      is_system: r.is_system,
      activity: r.activity,
      scope: r.scope,
      item_id: r.item_id,
      detail: r.detail,
      created_at: new Date(r.created_at).toISOString(),
    })),
    next: page * limit < totalCount ? absoluteUrlWith(req, { page: page + 1, limit }) : null,
    previous: page > 1 ? absoluteUrlWith(req, { page: page - 1, limit }) : null,
    total_count: totalCount,
  };
}
