import { errors } from '@sightline/http';
import { changePersonProperties, deletePersons, findPersonIdsByDistinctIds, findPersonIdsByRefs, splitPerson, findPersonByRef } from '@sightline/persons';
import { recordActivity } from '../activity-log';
import type { BulkDeleteTargets } from './persons-input';
import type { PersonsDeps } from './persons.service';
import { orderDistinctIds, personDisplayName } from './person-name';
import type { ListedPerson } from './person.serializer';

/** The activity log scope of persons (PostHog's). */
export const PERSONS_ACTIVITY_SCOPE = 'Person';

/** Who changes persons, in which project (its display-name properties name the person in the activity log). */
export interface PersonsActor {
  teamId: number;
  organizationId: string;
  userId: number | null;
  displayProperties: readonly string[] | null;
}

type Change = { type: 'Person'; action: string; field: string; before: unknown; after: unknown };

/** What names a person in its activity: its id, and its display name as the project's lists show it. */
const activityItemOf = (actor: PersonsActor, person: ListedPerson) => ({
  id: person.id,
  name: personDisplayName(person.properties, orderDistinctIds(person.distinctIds), person.id, actor.displayProperties),
});

async function logActivity(deps: PersonsDeps, actor: PersonsActor, item: { id: number; name: string }, activity: string, changes: Change[] | null = null) {
  await recordActivity(deps.db, {
    teamId: actor.teamId,
    organizationId: actor.organizationId,
    userId: actor.userId,
    scope: PERSONS_ACTIVITY_SCOPE,
    itemId: item.id,
    activity,
    detail: { name: item.name, changes: changes as never },
  });
}

const personsChanged = (deps: PersonsDeps, teamId: number) => deps.personsChanged?.(teamId) ?? Promise.resolve();

/** Merges `set` into the person's properties; answers the person as stored after the change. */
export async function updatePersonProperties(
  deps: PersonsDeps,
  actor: PersonsActor,
  person: ListedPerson,
  set: Record<string, unknown>,
): Promise<ListedPerson> {
  const changed = await changePersonProperties(deps, actor.teamId, person.id, { set });
  if (!changed) throw errors.notFound();
  await personsChanged(deps, actor.teamId);
  const after = await findPersonByRef(deps.db, actor.teamId, { uuid: person.uuid });
  if (!after) throw errors.notFound();
  await logActivity(deps, actor, activityItemOf(actor, after), 'updated', [
    { type: 'Person', action: 'changed', field: 'properties', before: person.properties, after: after.properties },
  ]);
  return after;
}

/** Sets one property (update_property). */
export async function setPersonProperty(deps: PersonsDeps, actor: PersonsActor, person: ListedPerson, change: { key: string; value: unknown }): Promise<void> {
  await changePersonProperties(deps, actor.teamId, person.id, { set: { [change.key]: change.value } });
  await personsChanged(deps, actor.teamId);
  await logActivity(deps, actor, activityItemOf(actor, person), 'updated', [
    { type: 'Person', action: 'changed', field: change.key, before: person.properties[change.key] ?? null, after: change.value },
  ]);
}

/** Removes one property (delete_property). */
export async function unsetPersonProperty(deps: PersonsDeps, actor: PersonsActor, person: ListedPerson, key: string): Promise<void> {
  await changePersonProperties(deps, actor.teamId, person.id, { unset: [key] });
  await personsChanged(deps, actor.teamId);
  await logActivity(deps, actor, activityItemOf(actor, person), 'updated', [
    { type: 'Person', action: 'deleted', field: key, before: person.properties[key] ?? null, after: null },
  ]);
}

/** Deletes one person; `deleteEvents` queues the deletion of its events. */
export async function deletePerson(deps: PersonsDeps, actor: PersonsActor, person: ListedPerson, deleteEvents: boolean): Promise<void> {
  await deletePersons(deps, actor.teamId, [person.id], { deleteEvents, requestedBy: actor.userId });
  await personsChanged(deps, actor.teamId);
  await logActivity(deps, actor, activityItemOf(actor, person), 'deleted');
}

/** Deletes the project's persons the targets name (those of other projects are not found). */
export async function bulkDeletePersons(
  deps: PersonsDeps,
  actor: PersonsActor,
  request: { deleteEvents: boolean; targets: BulkDeleteTargets },
): Promise<{ found: number; deleted: number }> {
  const { targets } = request;
  const personIds =
    'distinctIds' in targets
      ? await findPersonIdsByDistinctIds(deps.db, actor.teamId, targets.distinctIds)
      : await findPersonIdsByRefs(deps.db, actor.teamId, targets);
  const deleted = await deletePersons(deps, actor.teamId, personIds, { deleteEvents: request.deleteEvents, requestedBy: actor.userId });
  if (deleted.length > 0) await personsChanged(deps, actor.teamId);
  // PostHog names a bulk-deleted person by its uuid.
  for (const person of deleted) await logActivity(deps, actor, { id: person.id, name: person.uuid }, 'deleted');
  return { found: personIds.length, deleted: deleted.length };
}

/** Splits the person: each distinct id but `mainDistinctId` (one of the person's; none: the first) becomes a person of its own. */
export async function splitPersonApart(
  deps: PersonsDeps,
  actor: PersonsActor,
  person: ListedPerson,
  request: { mainDistinctId: string | null; maxSplits: number | null },
): Promise<void> {
  const { mainDistinctId, maxSplits } = request;
  if (mainDistinctId !== null && !person.distinctIds.includes(mainDistinctId))
    throw errors.validation('main_distinct_id is not a distinct id of this person.', 'main_distinct_id', 'invalid');
  const split = await splitPerson(deps, actor.teamId, person.id, { mainDistinctId, maxSplits, nowMs: deps.now() });
  if (!split) throw errors.notFound();
  await personsChanged(deps, actor.teamId);
  await logActivity(deps, actor, activityItemOf(actor, person), 'split_person', [
    { type: 'Person', action: 'split', field: 'distinct_ids', before: orderDistinctIds(person.distinctIds), after: split.moved.map((m) => m.distinctId) },
  ]);
}
