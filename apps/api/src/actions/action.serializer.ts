import type { ActionRow } from '@sightline/insights';
import type { Sql } from '@sightline/postgres';
import { selectorRegex } from '@sightline/properties';
import { loadBasicUsers } from '@sightline/accounts';

/** A step as PostHog's ActionStepJSONSerializer answers it: every field present, with the selector's regular expression. */
const serializeStep = (step: Partial<ActionRow['steps'][number]>) => ({
  event: step.event ?? null,
  properties: step.properties ?? null,
  selector: step.selector ?? null,
  selector_regex: step.selector ? selectorRegex(step.selector) : null,
  tag_name: step.tag_name ?? null,
  text: step.text ?? null,
  text_matching: step.text_matching ?? null,
  href: step.href ?? null,
  href_matching: step.href_matching ?? null,
  url: step.url ?? null,
  url_matching: step.url_matching ?? null,
});

/** PostHog's ActionSerializer fields (posthog/api/action.py). */
export async function serializeActions(db: Sql, rows: ActionRow[]) {
  const users = await loadBasicUsers(
    db,
    rows.map((r) => r.created_by_id),
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    description: row.description,
    tags: row.tags,
    post_to_slack: row.post_to_slack,
    slack_message_format: row.slack_message_format,
    steps: (row.steps ?? []).map(serializeStep),
    created_at: new Date(row.created_at).toISOString(),
    created_by: row.created_by_id === null ? null : (users.get(row.created_by_id) ?? null),
    deleted: row.deleted,
    is_calculating: false,
    // PostHog's column is set when the action is created and no longer maintained.
    last_calculated_at: new Date(row.created_at).toISOString(),
    team_id: row.team_id,
    is_action: true,
    bytecode_error: null,
    pinned_at: null,
    creation_context: null,
  }));
}
