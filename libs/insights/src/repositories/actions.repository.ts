import type { Sql } from '@sightline/postgres';
import type { ActionDefinition, ActionStep } from '../actions/action-steps';

/** An `actions` row. */
export interface ActionRow {
  id: number;
  team_id: number;
  name: string;
  description: string;
  tags: string[];
  steps: ActionStep[];
  post_to_slack: boolean;
  slack_message_format: string;
  deleted: boolean;
  created_by_id: number | null;
  created_at: Date;
  updated_at: Date;
}

export interface ActionInput {
  name?: string;
  description?: string;
  tags?: string[];
  steps?: ActionStep[];
  post_to_slack?: boolean;
  slack_message_format?: string;
  deleted?: boolean;
}

/** The live actions of a project, newest first (PostHog orders by creation, then name), optionally those whose name contains `search`. */
export async function listActions(
  db: Sql,
  teamId: number,
  page: { limit: number; offset: number; search?: string | null },
): Promise<{ count: number; rows: ActionRow[] }> {
  const search = page.search ? `%${page.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const [rows, total] = await Promise.all([
    db.query<ActionRow>(
      'SELECT * FROM actions WHERE team_id = $1 AND NOT deleted AND ($4::text IS NULL OR name ILIKE $4) ORDER BY created_at DESC, name, id DESC LIMIT $2 OFFSET $3',
      [teamId, page.limit, page.offset, search],
    ),
    db.query<{ n: string }>('SELECT count(*) AS n FROM actions WHERE team_id = $1 AND NOT deleted AND ($2::text IS NULL OR name ILIKE $2)', [teamId, search]),
  ]);
  return { count: Number(total[0]!.n), rows };
}

/** An action of the project by id, deleted or not (PostHog answers a deleted action by id), or null. */
export async function findAction(db: Sql, teamId: number, id: number): Promise<ActionRow | null> {
  const rows = await db.query<ActionRow>('SELECT * FROM actions WHERE team_id = $1 AND id = $2', [teamId, id]);
  return rows[0] ?? null;
}

/** Another live action of the project with this name (PostHog keeps names unique), or null. */
export async function findActionByName(db: Sql, teamId: number, name: string, exceptId: number | null): Promise<number | null> {
  const rows = await db.query<{ id: number }>('SELECT id FROM actions WHERE team_id = $1 AND name = $2 AND NOT deleted AND id <> COALESCE($3, -1) LIMIT 1', [
    teamId,
    name,
    exceptId,
  ]);
  return rows[0]?.id ?? null;
}

/** A new action; `input` was checked by the caller (name given, steps parsed). */
export async function insertAction(db: Sql, teamId: number, input: ActionInput, createdBy: number | null): Promise<ActionRow> {
  const rows = await db.query<ActionRow>(
    `INSERT INTO actions (team_id, name, description, tags, steps, post_to_slack, slack_message_format, created_by_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [
      teamId,
      input.name ?? '',
      input.description ?? '',
      input.tags ?? [],
      JSON.stringify(input.steps ?? []),
      input.post_to_slack ?? false,
      input.slack_message_format ?? '',
      createdBy,
    ],
  );
  return rows[0]!;
}

/** Changes the fields `input` gives (absent ones are kept), or null when the project has no such action. */
export async function updateAction(db: Sql, teamId: number, id: number, input: ActionInput): Promise<ActionRow | null> {
  const rows = await db.query<ActionRow>(
    `UPDATE actions SET
       name = COALESCE($3, name),
       description = COALESCE($4, description),
       tags = COALESCE($5, tags),
       steps = COALESCE($6::jsonb, steps),
       post_to_slack = COALESCE($7, post_to_slack),
       slack_message_format = COALESCE($8, slack_message_format),
       deleted = COALESCE($9, deleted),
       updated_at = now()
     WHERE team_id = $1 AND id = $2 RETURNING *`,
    [
      teamId,
      id,
      input.name ?? null,
      input.description ?? null,
      input.tags ?? null,
      input.steps ? JSON.stringify(input.steps) : null,
      input.post_to_slack ?? null,
      input.slack_message_format ?? null,
      input.deleted ?? null,
    ],
  );
  return rows[0] ?? null;
}

/** Soft-deletes an action, as PostHog removes them (a PATCH of deleted=true); false when there is none. */
export async function deleteAction(db: Sql, teamId: number, id: number): Promise<boolean> {
  const rows = await db.query<{ id: number }>('UPDATE actions SET deleted = true, updated_at = now() WHERE team_id = $1 AND id = $2 RETURNING id', [
    teamId,
    id,
  ]);
  return rows.length > 0;
}

/** The live actions among `ids` (deleted and other projects' actions are absent). */
export async function findActionsByIds(db: Sql, teamId: number, ids: number[]): Promise<Map<number, ActionDefinition>> {
  // Only ids a PostgreSQL integer can hold; anything else names no action.
  const wanted = [...new Set(ids.filter((id) => Number.isInteger(id) && id > 0 && id <= 2_147_483_647))];
  if (wanted.length === 0) return new Map();
  const rows = await db.query<ActionRow>('SELECT id, name, steps FROM actions WHERE team_id = $1 AND id = ANY($2::int[]) AND NOT deleted', [teamId, wanted]);
  return new Map(rows.map((row) => [row.id, { id: row.id, name: row.name, steps: row.steps ?? [] }]));
}
