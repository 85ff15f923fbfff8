import type { PersonJson } from '../persons';
import type { GroupRow } from './groups.repository';

/** A group as PostHog's GroupSerializer answers it. */
export function serializeGroup(group: Pick<GroupRow, 'groupTypeIndex' | 'groupKey' | 'properties' | 'createdAt'>) {
  return {
    group_type_index: group.groupTypeIndex,
    group_key: group.groupKey,
    group_properties: group.properties,
    created_at: group.createdAt,
  };
}

/**
 * Related actors as PostHog's actor serializers answer them (posthog/queries/actor_base_query.py):
 * an actor's `id` is the person's uuid or the group's key; Sightline records no recordings.
 */
export function serializeRelatedPerson(person: PersonJson) {
  return { ...person, id: person.uuid, last_seen_at: null, matched_recordings: [], value_at_data_point: null };
}

export function serializeRelatedGroup(group: GroupRow) {
  return {
    type: 'group' as const,
    id: group.groupKey,
    group_key: group.groupKey,
    group_type_index: group.groupTypeIndex,
    created_at: group.createdAt,
    properties: group.properties,
    matched_recordings: [],
    value_at_data_point: null,
  };
}
