import type { BatchHandler, ConsumedBatch, ConsumedMessage, EventBus, Topics } from '@sightline/bus';
import type { ClickHouseClient } from '@sightline/clickhouse';
import type { Logger } from '@sightline/logger';
import type { Metrics } from '@sightline/metrics';
import { GroupTypeIndexes, PersonlessDistinctIdCache, personChangesOf, WrittenCopies, WrittenPersons, type PersonChangeNotifier } from '@sightline/persons';
import type { MetadataStore } from '@sightline/postgres';
import { alwaysAnOutage, isPostgresOutage } from './pipeline/dependency-errors';
import { normalizeStep, type PreparedEvent } from './pipeline/normalize.step';
import { checkHandedOver, parseStep } from './pipeline/parse.step';
import { personsStep, type PersonsStepResult } from './pipeline/persons.step';
import { prepareCommonFormat2 } from './pipeline/prepare-format2.step';
import { runStep, StepError, type StepResult } from './pipeline/step-result';
import { createTeamStep } from './pipeline/team.step';
import { writeStep } from './pipeline/write.step';
import { createDefinitionsRecorder } from './pipeline/definitions-recorder';
import { gatherWhileBusy } from './gather-while-busy';
import { messagesIn, splitRun, type RunPart } from './run-parts';

export interface EventsConsumerDeps {
  ch: ClickHouseClient;
  db: MetadataStore;
  bus: EventBus;
  topics: Topics;
  /** Project id for a token; null when no such project exists. Throws when the store is down. */
  resolveTeam: (token: string) => Promise<number | null>;
  metrics: Metrics;
  logger: Logger;
  /** Told which projects' persons or groups a committed run wrote (decide drops its cached persons). */
  personChanges?: PersonChangeNotifier;
  /** Most runs in progress at once (default 4: the partitions the worker consumes at a time). */
  runsAtOnce?: number;
  /**
   * Runs gather at the persons step and at the ClickHouse write (gatherWhileBusy), up to
   * `maxEvents` per transaction or insert: one step of each at a time, what arrives meanwhile
   * goes together into the next. For stores that run one transaction or insert at a time and
   * pay a fixed cost per call (embedded PGlite and chdb); absent: each run on its own.
   */
  gatherRuns?: { maxEvents: number };
  /**
   * Runs gather at the ClickHouse write only (persons transactions stay side by side), up to
   * `maxEvents` per insert: a run that reaches its write while other runs are still before
   * theirs waits for them (at most `maxHoldMs`, default 250), so the runs started together (one
   * per partition of a fetch) share one insert. Ignored when gatherRuns is set.
   */
  gatherWrites?: { maxEvents: number; maxHoldMs?: number };
  /** Distinct ids whose persons, as this process last committed them, runs take instead of reading (WrittenPersons; default 200,000; 0: always read). */
  keptPersons?: number;
}

/**
 * Events that went through the persons step together (one transaction), and the write of them
 * all: a run whose events were in it waits for that one write.
 */
interface PersonsGroup {
  events: PreparedEvent[];
  /** How many runs' events these are. */
  runs: number;
  result: PersonsStepResult;
  written?: Promise<void>;
}

/** A failure of runs gathered together that is their data's: each runs again alone. */
const isDataError = (error: unknown) => error instanceof StepError && !error.outage;

/** A message with the batch (topic, partition) it came in. */
interface Entry {
  batch: ConsumedBatch;
  message: ConsumedMessage;
}

interface DeadLetter extends Entry {
  step: string;
  error: string;
}

/**
 * The events pipeline (see the step files in ./pipeline): per message parse → team →
 * normalize (each ok / drop / dead-letter; a bus format 2 message in the common case takes the
 * three in one, prepareCommonFormat2), then for the whole run persons & groups (one
 * Postgres transaction), one ClickHouse insert of the rows plus the person/group copies,
 * then the event and property definitions of the written events (concurrent runs share one
 * upsert), then the dead letters. Resolving lets the bus commit the batches of the run.
 *
 * A dependency outage rejects the run: the bus retries it with backoff and commits
 * nothing. Any other failure means some message can never succeed; the run is then
 * split until the failing messages are found, and only they are dead-lettered.
 *
 * Batches of different partitions run side by side, up to `runsAtOnce`; batches that arrive
 * while every slot is busy are taken together by the next run (each partition still has at
 * most one batch in hand, so its order holds).
 */
export function createEventsConsumer(deps: EventsConsumerDeps): BatchHandler {
  const groupTypes = new GroupTypeIndexes(deps.db);
  const personlessCache = new PersonlessDistinctIdCache();
  const writtenCopies = new WrittenCopies();
  const writtenPersons = deps.keptPersons === 0 ? undefined : new WrittenPersons(deps.keptPersons);
  const definitions = createDefinitionsRecorder(deps.db, deps.logger);

  async function prepare(parts: readonly RunPart[]) {
    const events: PreparedEvent[] = [];
    /** Prepared events per topic, counted as written once the run is. */
    const perTopic = new Map<string, number>();
    const deadLetters: DeadLetter[] = [];
    const teamOf = createTeamStep(deps.resolveTeam);
    const settle = (batch: ConsumedBatch, message: ConsumedMessage, step: string, result: Exclude<StepResult<unknown>, { kind: 'ok' }>) => {
      if (result.kind === 'drop') deps.metrics.eventsDropped.inc({ reason: result.reason });
      else deadLetters.push({ batch, message, step, error: result.error });
    };
    for (const { batch, messages } of parts) {
      const before = events.length;
      for (const message of messages) {
        // In-process, the message comes as the gateway built it: only checked, not parsed.
        const { decoded } = message;
        let event: PreparedEvent | null = decoded === undefined ? prepareCommonFormat2(message.value) : null;
        if (event === null) {
          const ingest = decoded === undefined ? parseStep(message.value) : checkHandedOver(decoded);
          if (ingest.kind !== 'ok') {
            settle(batch, message, 'parse', ingest);
            continue;
          }
          const reading = ingest.value;
          // Known projects answer at once: no promise (and no microtask) per event.
          let team = teamOf(reading.message);
          if (team instanceof Promise) team = await team;
          if (team.kind !== 'ok') {
            settle(batch, message, 'team', team);
            continue;
          }
          const normalized = normalizeStep(reading.message, team.value, decoded !== undefined, reading.knownClean, reading);
          if (normalized.kind !== 'ok') {
            settle(batch, message, 'normalize', normalized);
            continue;
          }
          event = normalized.value;
        }
        events.push(event);
      }
      // Counted once per batch, not per event.
      if (events.length > before) perTopic.set(batch.topic, (perTopic.get(batch.topic) ?? 0) + events.length - before);
    }
    return { events, perTopic, deadLetters };
  }

  async function sendDeadLetters(letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await runStep('dead-letter', alwaysAnOutage, () =>
      deps.bus.send(
        deps.topics.deadLetter,
        letters.map(({ batch, message, step, error }) => ({
          key: message.key ?? '',
          value: message.value,
          headers: {
            ...message.headers,
            'x-original-topic': batch.topic,
            'x-original-partition': String(batch.partition),
            'x-original-offset': message.offset,
            'x-error': error.slice(0, 500),
            'x-step': step,
            'x-first-seen-at': new Date().toISOString(),
          },
        })),
      ),
    );
    for (const letter of letters) deps.metrics.deadLetters.inc({ step: letter.step });
    deps.metrics.eventsDropped.inc({ reason: 'dead_letter' }, letters.length);
    deps.logger.warn(
      { count: letters.length, at: letters.map((l) => `${l.batch.topic}/${l.batch.partition}@${l.message.offset} (${l.step})`) },
      'messages dead-lettered',
    );
  }

  const timer = (step: string) => deps.metrics.pipelineStepDuration.startTimer({ step });

  async function persons(events: PreparedEvent[], runs = 1): Promise<PersonsGroup> {
    const done = timer('persons');
    const result = await runStep('persons', isPostgresOutage, () => personsStep(deps.db, groupTypes, personlessCache, events, writtenPersons));
    done();
    const changes = personChangesOf(result.copies);
    // Not awaited: an unreachable Redis must not hold up ingestion (caches expire on their own).
    if (changes.length > 0) void deps.personChanges?.personsChanged(changes);
    return { events, runs, result };
  }

  /** One insert per table of the groups' rows and copies, in their order. */
  async function write(groups: readonly PersonsGroup[]): Promise<void> {
    const done = timer('write');
    if (groups.length === 1) {
      const [{ events, result }] = groups as [PersonsGroup];
      await writeStep(deps.ch, events, result.enrichments, result.copies, writtenCopies);
    } else {
      const all = <T>(of: (g: PersonsGroup) => readonly T[]) => groups.flatMap(of);
      await writeStep(
        deps.ch,
        all((g) => g.events),
        all((g) => g.result.enrichments),
        { persons: all((g) => g.result.copies.persons), distinctIds: all((g) => g.result.copies.distinctIds), groups: all((g) => g.result.copies.groups) },
        writtenCopies,
      );
    }
    done();
    for (const g of groups) for (const type of g.result.warnings) deps.metrics.ingestionWarnings.inc({ type });
  }

  const gather = deps.gatherRuns;
  const gatheredPersons = gather
    ? gatherWhileBusy<PreparedEvent[], PersonsGroup>({
        execute: async (runs) => {
          const group = await persons(runs.length === 1 ? runs[0]! : runs.flat(), runs.length);
          return runs.map(() => group);
        },
        sizeOf: (events) => events.length,
        maxSize: gather.maxEvents,
        retryAlone: isDataError,
      })
    : persons;
  const gatherWrite = gather ?? deps.gatherWrites;
  const gatheredWrite = gatherWrite
    ? gatherWhileBusy<PersonsGroup, void>({
        execute: async (groups) => {
          await write(groups);
          return groups.map(() => undefined);
        },
        sizeOf: (group) => group.events.length,
        maxSize: gatherWrite.maxEvents,
        retryAlone: isDataError,
        // Runs started together (one per partition of a fetch) write together; gathered runs
        // (gatherRuns) already reach the write together.
        holdWhile: gather ? undefined : () => runsBeforeWrite > 0,
        maxHoldMs: deps.gatherWrites?.maxHoldMs,
      })
    : Object.assign((group: PersonsGroup) => write([group]), { wake: () => undefined });
  /** Runs started and not yet at their write (or finished without one). */
  let runsBeforeWrite = 0;

  async function processRun(parts: readonly RunPart[]): Promise<void> {
    runsBeforeWrite++;
    let beforeWrite = true;
    const reachedWrite = () => {
      if (!beforeWrite) return;
      beforeWrite = false;
      if (--runsBeforeWrite === 0) gatheredWrite.wake();
    };
    try {
      await processRunCounted(parts, reachedWrite);
    } finally {
      reachedWrite();
    }
  }

  async function processRunCounted(parts: readonly RunPart[], reachedWrite: () => void): Promise<void> {
    let done = timer('prepare');
    const { events, perTopic, deadLetters } = await prepare(parts);
    done();
    if (events.length > 0) {
      const group = await gatheredPersons(events);
      reachedWrite();
      // The runs of one persons group share its write (a run is done once all of it is written).
      group.written ??= gatheredWrite(group);
      // Recorded while the events are written, not after: definitions are not part of the data (a
      // write that fails is retried and records them again), and PostgreSQL takes them while
      // ClickHouse inserts. Not so with gatherRuns: there PGlite runs one statement at a time and
      // the definitions would queue before the next runs' persons steps.
      if (!gather) definitions.record(events);
      try {
        await group.written;
      } catch (error) {
        // Another run's data may be what failed the write: this run goes again on its own (its
        // persons are applied again, as after any failed write), so only a run that fails alone
        // is split to find its bad message.
        if (group.runs === 1 || !isDataError(error)) throw error;
        await write([await persons(events)]);
      }
      if (gather) definitions.record(events);
      // Waited for before the run's batches are committed: a write left running in the
      // background would outlive a graceful shutdown (the embedded store closes under it and the
      // process ends without finishing its stop).
      done = timer('definitions');
      await definitions.idle();
      done();
      for (const [topic, n] of perTopic) deps.metrics.eventsWritten.inc({ topic }, n);
    }
    await sendDeadLetters(deadLetters);
  }

  /**
   * Runs the messages; when they fail on their data, halves them (in order, so each key's
   * order holds) until the failing messages stand alone and are dead-lettered: a single
   * poison message in a run of n costs about 2·log2(n) extra runs, not n.
   */
  async function runIsolating(parts: readonly RunPart[]): Promise<boolean> {
    try {
      await processRun(parts);
      return true;
    } catch (error) {
      if (error instanceof StepError && error.outage) throw error;
      const count = messagesIn(parts);
      if (count === 1) {
        const step = error instanceof StepError ? error.step : 'unknown';
        const { batch, messages } = parts.find((part) => part.messages.length > 0)!;
        await sendDeadLetters([{ batch, message: messages[0]!, step, error: error instanceof Error ? error.message : String(error) }]);
        return false;
      }
      deps.logger.warn({ err: error, messages: count }, 'run failed on its data; splitting it to find the message');
      const [left, right] = splitRun(parts, Math.ceil(count / 2));
      const leftDone = await runIsolating(left);
      const rightDone = await runIsolating(right);
      return leftDone && rightDone;
    }
  }

  async function run(batches: readonly ConsumedBatch[]): Promise<void> {
    const parts: RunPart[] = batches.filter((batch) => batch.messages.length > 0).map((batch) => ({ batch, messages: batch.messages }));
    const count = (result: string) => {
      for (const batch of batches) deps.metrics.consumerBatches.inc({ topic: batch.topic, result });
    };
    try {
      count((await runIsolating(parts)) ? 'ok' : 'isolated');
    } catch (error) {
      count('outage');
      throw error;
    }
  }

  return coalesceConcurrentBatches(run, deps.runsAtOnce);
}

/**
 * A batch handler that runs at most `concurrency` runs at a time: a batch starts a run at
 * once when a slot is free; batches arriving while all slots are busy wait and go together
 * into the next run. Each partition has at most one batch in hand, so concurrent runs never
 * hold the same partition and per-key order holds. Each caller learns the outcome of its run.
 *
 * The default matches the four partitions the worker consumes at a time: the bus fetches the
 * next batches only once every batch of a fetch is handled, so a batch left waiting for a slot
 * (then run on its own, PostgreSQL step and ClickHouse write one after the other) would hold up
 * the whole fetch; with a slot each, the runs' PostgreSQL steps and ClickHouse writes overlap.
 */
export function coalesceConcurrentBatches(run: (batches: readonly ConsumedBatch[]) => Promise<void>, concurrency = 4): BatchHandler {
  let waiting: { batch: ConsumedBatch; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let running = 0;
  const drain = async () => {
    running++;
    while (waiting.length > 0) {
      const taken = waiting;
      waiting = [];
      try {
        await run(taken.map((t) => t.batch));
        for (const t of taken) t.resolve();
      } catch (error) {
        for (const t of taken) t.reject(error);
      }
    }
    running--;
  };
  return (batch) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ batch, resolve, reject });
      if (running < concurrency) void drain();
    });
}
