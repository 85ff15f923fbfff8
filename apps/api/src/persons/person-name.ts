import { isUuidText } from '@sightline/insights';

/** PostHog's default person display-name properties, in order (posthog/api/person.py get_person_name). */
const DISPLAY_NAME_PROPERTIES = ['email', 'Email', '$email', 'name', 'Name', 'username', 'Username', 'UserName'];

/**
 * The first non-empty display-name property (the project's `person_display_name_properties` when
 * it names any, else PostHog's defaults), else the first distinct id (non-uuid ones first), else the id.
 */
export function personDisplayName(
  properties: Record<string, unknown>,
  distinctIds: readonly string[],
  id: number | string,
  displayProperties: readonly string[] | null = null,
): string {
  for (const key of displayProperties?.length ? displayProperties : DISPLAY_NAME_PROPERTIES) {
    const value = properties[key];
    if (value !== undefined && value !== null && value !== '') return String(value);
  }
  return distinctIds[0] ?? String(id);
}

/** Distinct ids as PostHog lists them: ids that are not uuids first (they name the user), each group in order. */
export function orderDistinctIds(ids: readonly string[]): string[] {
  return [...ids.filter((id) => !isUuidText(id)), ...ids.filter((id) => isUuidText(id))];
}
