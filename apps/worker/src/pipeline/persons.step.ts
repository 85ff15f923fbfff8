import {
  GroupBatch,
  PersonBatch,
  PersonVersionRace,
  personUpdatesFromEvent,
  type GroupCopy,
  type GroupRef,
  type GroupTypeIndexes,
  type MergeKind,
  type PersonBatchCopies,
  type PersonlessDistinctIdCache,
  type WrittenPersons,
} from '@sightline/persons';
import type { MetadataStore, Sql } from '@sightline/postgres';
import { isJsonObject } from '@sightline/json-input';
import type { PreparedEvent } from './normalize.step';

/** What person and group processing adds to an event row. */
export interface Enrichment {
  personId: string;
  personPropertiesJson: string;
  personCreatedAtMs: number | null;
  personMode: 'full' | 'propertyless';
  /** Attached groups by index: their properties at ingestion time. */
  groups: readonly { index: number; propertiesJson: string; createdAtMs: number }[];
}

export interface PersonsStepResult {
  enrichments: Enrichment[];
  copies: PersonBatchCopies & { groups: GroupCopy[] };
  /** Ingestion warnings by type (refused merges and the like), counted by the caller. */
  warnings: string[];
}

const NO_ATTACHED_GROUPS: Enrichment['groups'] = Object.freeze([]);

/** Events that never change a person (PostHog skips them too). */
const NO_PERSON_UPDATES = new Set(['$exception', '$$heatmap']);
/** Compared, not hashed: each event's name is a string of its own, whose hash a set lookup would compute. */
const isMergeEvent = (name: string) => name === '$identify' || name === '$create_alias' || name === '$merge_dangerously';

const asKey = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : null);

/**
 * The merge an event asks for, as (into, other): `$identify` keeps the identified id's
 * person; `$create_alias` merges distinct_id into the alias, which becomes the main id
 * (docs/behaviours.md#alias-direction); `$merge_dangerously` merges the same way.
 */
function mergeRequest(event: PreparedEvent): { kind: MergeKind; into: string; other: string } | null {
  if (event.event === '$identify') {
    const anon = asKey(event.properties['$anon_distinct_id']);
    return anon === null ? null : { kind: '$identify', into: event.distinctId, other: anon };
  }
  if (event.event === '$create_alias' || event.event === '$merge_dangerously') {
    const alias = asKey(event.properties['alias']);
    return alias === null ? null : { kind: event.event, into: alias, other: event.distinctId };
  }
  return null;
}

interface GroupPlan {
  /** $groups on the event, resolved to indexes. */
  readonly attached: readonly GroupRef[];
  /** $groupidentify target. */
  identify: GroupRef | null;
}

const NO_GROUPS: GroupPlan = Object.freeze({ attached: Object.freeze([]), identify: null });

/** Resolves group types to indexes (outside the transaction: a mapping is a permanent, idempotent insert). */
async function planGroups(events: readonly PreparedEvent[], groupTypes: GroupTypeIndexes): Promise<GroupPlan[]> {
  const plans: GroupPlan[] = [];
  for (const event of events) {
    const groups = event.properties['$groups'];
    // Most events name no group: they share one empty plan (a run holds thousands of them).
    if (groups === undefined && event.event !== '$groupidentify') {
      plans.push(NO_GROUPS);
      continue;
    }
    const plan = { attached: [] as GroupRef[], identify: null as GroupRef | null };
    if (isJsonObject(groups)) {
      for (const [type, rawKey] of Object.entries(groups)) {
        const key = asKey(rawKey);
        if (key === null) continue;
        const index = await groupTypes.resolve(event.teamId, type);
        if (index === null) continue;
        plan.attached.push({ teamId: event.teamId, groupTypeIndex: index, groupKey: key });
        event.properties[`$group_${index}`] = key;
      }
    }
    if (event.event === '$groupidentify') {
      const type = asKey(event.properties['$group_type']);
      const key = asKey(event.properties['$group_key']);
      const index = type === null || key === null ? null : await groupTypes.resolve(event.teamId, type);
      if (index !== null) plan.identify = { teamId: event.teamId, groupTypeIndex: index, groupKey: key! };
    }
    plans.push(plan);
  }
  return plans;
}

/**
 * Person and group processing for a batch, in event order, in one Postgres transaction:
 * load every person and group the batch names, apply each event in memory, then write the
 * changes back with a few bulk statements. Events of one distinct id are thus applied strictly
 * in order while the database work of all keys is shared.
 *
 * A run that merges persons reads them locked (FOR UPDATE): a merge racing a batch of another
 * partition must not move distinct ids under it. A run without merge requests reads its persons
 * without locks and writes each changed one only where its version is still the one read
 * (PostHog's ASSERT_VERSION writes); when another writer got in between (a merge, an API change,
 * a batch of another partition on a person with ids in both), the run is worked out again at
 * once from a locked read. Groups are read locked whenever the run writes.
 *
 * Such a run also skips reading the persons this process committed last (`remembered`): it
 * takes them as kept, and its write checks each one's version, changed or not; a miss is a lost
 * race like any other. Once a run without merges commits, its persons are kept; a run with
 * merges, or one that failed, makes its ids be read next time.
 */
export async function personsStep(
  db: MetadataStore,
  groupTypes: GroupTypeIndexes,
  personlessCache: PersonlessDistinctIdCache,
  events: readonly PreparedEvent[],
  remembered?: WrittenPersons,
): Promise<PersonsStepResult> {
  const plans = await planGroups(events, groupTypes);
  const distinctIdsByTeam = new Map<number, Set<string>>();
  /**
   * Per project, the ids a person may be created for or linked to: those of person-processing
   * events and merges (kept per project, so no key text is made per event).
   */
  const mayCreate = new Map<number, Set<string>>();
  let merges = false;
  let teamId = NaN;
  let ids: Set<string> | undefined;
  let creatable: Set<string> | undefined;
  for (const event of events) {
    // A run is nearly always one project's: its sets are looked up only when the project changes.
    if (event.teamId !== teamId) {
      teamId = event.teamId;
      ids = distinctIdsByTeam.get(teamId);
      if (!ids) distinctIdsByTeam.set(teamId, (ids = new Set()));
      creatable = mayCreate.get(teamId);
      if (!creatable) mayCreate.set(teamId, (creatable = new Set()));
    }
    ids!.add(event.distinctId);
    if (!event.processPerson) continue;
    creatable!.add(event.distinctId);
    const merge = mergeRequest(event);
    if (merge) {
      merges = true;
      ids!.add(merge.into).add(merge.other);
      creatable!.add(merge.into).add(merge.other);
    }
  }
  const run: PersonsRun = { events, plans, distinctIdsByTeam, mayCreate, personlessCache };
  // A batch of personless events without $groupidentify only reads persons: no transaction, no locks.
  const writes = events.some((e) => e.processPerson) || plans.some((p) => p.identify !== null);
  if (!writes) return (await processPersons(db, run, { lockPersons: false, lockGroups: false })).result;
  const attempt = async (locks: Locks, kept?: WrittenPersons) => {
    const { result, persons } = await db.transaction((tx) => processPersons(tx, run, locks, kept));
    // Committed: what the run left in PostgreSQL is now what this process knows of those persons.
    if (remembered && !merges) persons.rememberIn(remembered);
    return result;
  };
  try {
    // A store that runs one transaction at a time (embedded PGlite) cannot interleave them: no
    // locks. Only a kept person can be out of date there (an API change between runs); a merge
    // reads its persons, as everywhere (it deletes one without a version to check).
    if (db.oneTransactionAtATime)
      return await retryRaceFromRead(
        () => attempt(UNLOCKED, merges ? undefined : remembered),
        () => attempt(UNLOCKED),
      );
    if (merges) return await attempt(LOCKED);
    return await retryRaceFromRead(
      () => attempt({ lockPersons: false, lockGroups: true }, remembered),
      () => attempt(LOCKED),
    );
  } catch (error) {
    if (remembered) forgetRun(remembered, distinctIdsByTeam);
    throw error;
  } finally {
    // A merge moves distinct ids (also ids the run never saw, whose kept person is then deleted
    // or bumped: checked anyway); the run's own ids are read next time.
    if (remembered && merges) forgetRun(remembered, distinctIdsByTeam);
  }
}

interface Locks {
  lockPersons: boolean;
  lockGroups: boolean;
}
const UNLOCKED: Locks = { lockPersons: false, lockGroups: false };
const LOCKED: Locks = { lockPersons: true, lockGroups: true };

/** Runs `first`; when it lost a race on a person's version, runs `fromRead` instead. */
async function retryRaceFromRead<T>(first: () => Promise<T>, fromRead: () => Promise<T>): Promise<T> {
  try {
    return await first();
  } catch (error) {
    if (!(error instanceof PersonVersionRace)) throw error;
    return fromRead();
  }
}

function forgetRun(remembered: WrittenPersons, distinctIdsByTeam: ReadonlyMap<number, Set<string>>): void {
  for (const [teamId, ids] of distinctIdsByTeam) for (const id of ids) remembered.forget(teamId, id);
}

interface PersonsRun {
  events: readonly PreparedEvent[];
  plans: readonly GroupPlan[];
  distinctIdsByTeam: ReadonlyMap<number, Set<string>>;
  mayCreate: ReadonlyMap<number, ReadonlySet<string>>;
  personlessCache: PersonlessDistinctIdCache;
}

/**
 * One attempt at a run's persons and groups, on `sql` (the run's transaction, or the store for a
 * read-only run); `remembered`: persons to take as kept instead of reading them.
 */
async function processPersons(
  sql: Sql,
  run: PersonsRun,
  locks: Locks,
  remembered?: WrittenPersons,
): Promise<{ result: PersonsStepResult; persons: PersonBatch }> {
  const { events, plans, mayCreate } = run;
  const groupRefs = plans.flatMap((p) => (p.identify ? [...p.attached, p.identify] : p.attached));
  const persons = await PersonBatch.load(sql, run.distinctIdsByTeam, {
    lock: locks.lockPersons,
    personlessCache: run.personlessCache,
    mayCreate: (teamId, distinctId) => mayCreate.get(teamId)?.has(distinctId) ?? false,
    remembered,
  });
  const groups = await GroupBatch.load(sql, groupRefs, { lock: locks.lockGroups });
  const warnings: string[] = [];
  const enrichments = events.map((event, i): Enrichment => {
    const plan = plans[i]!;
    if (plan.identify) groups.identify(plan.identify, isJsonObject(event.properties['$group_set']) ? event.properties['$group_set'] : {}, event.timestampMs);
    const attachedGroups =
      plan.attached.length === 0
        ? NO_ATTACHED_GROUPS
        : plan.attached.flatMap((ref) => {
            const group = groups.get(ref);
            return group ? [{ index: ref.groupTypeIndex, propertiesJson: groups.propertiesJson(group), createdAtMs: group.createdAtMs }] : [];
          });

    if (!event.processPerson) {
      if (isMergeEvent(event.event)) warnings.push('personless_merge_ignored');
      const person = persons.personOfPersonlessEvent(event.teamId, event.distinctId);
      const existing = typeof person === 'string' ? undefined : person;
      return {
        personId: existing?.uuid ?? (person as string),
        personPropertiesJson: existing ? persons.propertiesJson(existing) : '{}',
        personCreatedAtMs: existing?.createdAtMs ?? null,
        personMode: 'propertyless',
        groups: attachedGroups,
      };
    }

    const merge = mergeRequest(event);
    if (merge) {
      const outcome = persons.merge(event.teamId, merge.into, merge.other, merge.kind, event.timestampMs);
      if (outcome === 'illegal_id') warnings.push('cannot_merge_with_illegal_distinct_id');
      if (outcome === 'refused_already_identified') warnings.push('cannot_merge_already_identified');
    }
    const person = persons.getOrCreate(event.teamId, event.distinctId, event.timestampMs);
    if (!NO_PERSON_UPDATES.has(event.event))
      persons.updateProperties(person, personUpdatesFromEvent(event.properties), event.historical ? event.timestampMs : null);
    return {
      personId: person.uuid,
      personPropertiesJson: persons.propertiesJson(person),
      personCreatedAtMs: person.createdAtMs,
      personMode: 'full',
      groups: attachedGroups,
    };
  });
  const personCopies = await persons.flush(sql);
  const groupCopies = await groups.flush(sql);
  return { result: { enrichments, copies: { ...personCopies, groups: groupCopies }, warnings }, persons };
}
