import { BatchRefusedError, HostUnreachableError, RateLimiter, sendBatch, type HostContact } from './batch-sender';
import { CheckpointError, LineWatermark, readCheckpoint, writeCheckpoint, type Checkpoint } from './checkpoint';
import { checkEvent, stableEventUuid, type CheckContext, type RejectReason } from './event-check';
import { createRecordMapper, guessFormat, type FieldMap, type Format } from './formats';
import { ImportReport } from './import-report';
import { describeSource, readSource, type Source } from './source-reader';
import type { TimeSettings } from './source-time';

export interface ImportOptions {
  files: string[];
  host: string;
  apiKey: string;
  format: Format;
  map: FieldMap;
  /** How times without a zone (and Mixpanel's epochs) are read. */
  times: TimeSettings;
  /** Events from this time on… */
  fromMs: number | null;
  /** …and before this one (a bare --to date ends with its day). */
  toBeforeMs: number | null;
  limit: number | null;
  rate: number | null;
  concurrency: number;
  batchBytes: number;
  batchEvents: number;
  dryRun: boolean;
  checkpointPath: string | null;
  resume: boolean;
  maxAttempts: number;
}

/** What the run tells whoever shows progress. */
export interface ImportProgress {
  onBytes(n: number): void;
  /** Valid events read so far (with bytes read, it estimates how many the files hold). */
  onValid(events: number): void;
  onSent(events: number): void;
  onRetry(reason: string, waitMs: number): void;
  /** Something the user should know now, not only in the final report. */
  onNotice(text: string): void;
}

export interface ImportResult {
  report: ImportReport;
  /** Stopped before the end (Ctrl-C): the checkpoint holds where to resume. */
  interrupted: boolean;
}

interface OpenBatch {
  id: number;
  file: number;
  events: string[];
  /** Where each event came from, for the service's `dropped` list. */
  origins: { file: string; line: number }[];
  bytes: number;
}

/** Records read without one valid event before the run says the format seems wrong. */
const FORMAT_CHECK_RECORDS = 1_000;
/** Ids of implied events (aliases, group properties) remembered as sent; past this, forgetting only sends one again. */
const IMPLIED_IDS_KEPT = 500_000;

/** Room in a batch body for the envelope around the events. */
const ENVELOPE_BYTES = 256;

/**
 * Runs an import: every file in order, streamed record by record, mapped and checked, gathered
 * into `/batch/` bodies bounded by count and bytes, sent with `historical_migration: true`,
 * `concurrency` at a time under the rate limit. After each acknowledged batch the checkpoint
 * records, per file, the lines settled so far; a resumed run skips them. `stop` (Ctrl-C) ends
 * reading; batches in flight are still waited for.
 */
export async function runImport(options: ImportOptions, progress: ImportProgress, stop: AbortSignal): Promise<ImportResult> {
  const report = new ImportReport();
  const sources: Source[] = options.files.map(describeSource);
  if (options.resume && !options.checkpointPath) throw new CheckpointError('--resume needs --checkpoint FILE.');
  if (options.checkpointPath && sources.some((s) => s.identity === null))
    throw new CheckpointError('standard input cannot be checkpointed: import a file to be able to resume.');
  const previous = options.resume && options.checkpointPath ? readCheckpoint(options.checkpointPath) : null;
  if (options.resume && !previous) throw new CheckpointError(`no checkpoint at ${options.checkpointPath}: nothing to resume.`);
  const checkpoint: Checkpoint = {
    version: 1,
    files: sources.map((source) => {
      const before = previous?.files.find((f) => f.path === source.path);
      if (before && before.identity !== source.identity) {
        throw new CheckpointError(
          `${source.path} changed since the checkpoint was written; it will not be resumed. Start a new import (without --resume) to send it again.`,
        );
      }
      return { path: source.path, identity: source.identity ?? '', linesDone: before?.linesDone ?? 0, complete: before?.complete ?? false };
    }),
  };
  const watermarks = checkpoint.files.map((f) => new LineWatermark(f.linesDone));
  const saveCheckpoint = () => {
    if (!options.checkpointPath || options.dryRun) return;
    checkpoint.files.forEach((file, i) => (file.linesDone = watermarks[i]!.linesDone));
    writeCheckpoint(options.checkpointPath, checkpoint);
  };

  const url = `${options.host.replace(/\/+$/, '')}/batch/`;
  const limiter = options.rate ? new RateLimiter(options.rate) : null;
  const contact: HostContact = { answered: false };
  const inFlight = new Set<Promise<void>>();
  let fatal: unknown = null;
  let nextBatchId = 0;

  const dispatch = async (batch: OpenBatch) => {
    if (options.dryRun) {
      watermarks[batch.file]!.acknowledged(batch.id);
      return;
    }
    while (inFlight.size >= options.concurrency) await Promise.race(inFlight);
    if (fatal) throw fatal;
    if (limiter) await limiter.take(batch.events.length);
    report.sent += batch.events.length;
    const body = `{"api_key":${JSON.stringify(options.apiKey)},"historical_migration":true,"batch":[${batch.events.join(',')}]}`;
    const sending = sendBatch(url, body, {
      maxAttempts: options.maxAttempts,
      contact,
      onRetry: (reason, waitMs) => (report.retried++, progress.onRetry(reason, waitMs)),
    })
      .then((dropped) => {
        watermarks[batch.file]!.acknowledged(batch.id);
        for (const { index, reason } of dropped) {
          const origin = batch.origins[index];
          if (origin) report.droppedBy(reason, origin.file, origin.line);
        }
        report.accepted += batch.events.length - dropped.length;
        progress.onSent(batch.events.length);
        saveCheckpoint();
      })
      .catch((error: unknown) => {
        fatal ??= error;
      })
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
  };

  const mapRecord = createRecordMapper(options.format, options.map);
  const checks: CheckContext = { times: options.times, apiKey: options.apiKey, nowMs: Date.now() };
  let accepted = 0;
  let records = 0;
  let interrupted = false;
  let formatNoticed = false;
  /** Implied events already sent by this run: the same alias or group properties once, however many records imply them. */
  const impliedSent = new Set<string>();
  let firstRecordFormat: ReturnType<typeof guessFormat> = null;
  const formatHint = () => {
    const guess = firstRecordFormat && firstRecordFormat !== options.format ? ` They look like --format ${firstRecordFormat}.` : '';
    return `no record read so far matched --format ${options.format}.${guess}`;
  };
  files: for (const [fileIndex, source] of sources.entries()) {
    const file = checkpoint.files[fileIndex]!;
    if (file.complete) continue;
    const watermark = watermarks[fileIndex]!;
    const skipThrough = file.linesDone;
    let batch: OpenBatch | null = null;
    const kind = options.format === 'csv' ? 'csv' : 'jsonl';
    for await (const item of readSource(source.path, kind, progress.onBytes)) {
      if (stop.aborted || fatal) {
        interrupted = stop.aborted;
        break files;
      }
      if (item.line <= skipThrough) continue;
      const origin = item.where ?? { file: source.path, line: item.line };
      const reject = (reason: RejectReason) => {
        report.reject(reason, origin.file, origin.line);
        watermark.read(item.line);
      };
      records++;
      if (!formatNoticed && report.valid === 0 && records >= FORMAT_CHECK_RECORDS) {
        formatNoticed = true;
        progress.onNotice(`${formatHint()} Still reading; press Ctrl-C to stop.`);
      }
      if ('invalid' in item) {
        reject(item.invalid);
        continue;
      }
      firstRecordFormat ??= guessFormat(item.record);
      const record = item.record;
      const recordText = () => JSON.stringify(record);
      const [main, ...derived] = mapRecord(record);
      const checked = checkEvent(main!, recordText, checks);
      if (!checked.ok) {
        reject(checked.reason);
        continue;
      }
      if ((options.fromMs !== null && checked.timeMs < options.fromMs) || (options.toBeforeMs !== null && checked.timeMs >= options.toBeforeMs)) {
        report.filteredOut++;
        watermark.read(item.line);
        continue;
      }
      report.count(checked.event);
      if (checked.conversion) report.converted(checked.conversion);
      progress.onValid(report.valid);
      const texts = [checked.text];
      for (const extra of derived) {
        const id = stableEventUuid(extra.sourceId, '');
        if (impliedSent.has(id)) continue;
        if (impliedSent.size >= IMPLIED_IDS_KEPT) impliedSent.clear();
        impliedSent.add(id);
        const implied = checkEvent(extra, recordText, checks);
        if (!implied.ok) report.reject(implied.reason, origin.file, origin.line);
        else {
          texts.push(implied.text);
          report.countDerived(implied.event.event);
        }
      }
      for (const text of texts) {
        // The service's 20 MiB are bytes: counted in UTF-8, not in UTF-16 units.
        const bytes = Buffer.byteLength(text) + 1;
        if (batch && (batch.events.length >= options.batchEvents || batch.bytes + bytes > options.batchBytes - ENVELOPE_BYTES)) {
          await dispatch(batch);
          batch = null;
        }
        if (!batch) {
          batch = { id: nextBatchId++, file: fileIndex, events: [], origins: [], bytes: 0 };
          watermark.opened(batch.id, item.line);
        }
        batch.events.push(text);
        batch.origins.push(origin);
        batch.bytes += bytes;
      }
      watermark.read(item.line);
      if (options.limit !== null && ++accepted >= options.limit) {
        if (batch) await dispatch(batch);
        batch = null;
        break files;
      }
    }
    if (batch) await dispatch(batch);
    if (!stop.aborted && !fatal) {
      await Promise.all(inFlight);
      if (!fatal) file.complete = true;
    }
  }
  if (report.valid === 0 && report.rejectedCount > 0) report.formatHint = formatHint();
  await Promise.all(inFlight);
  saveCheckpoint();
  if (fatal)
    throw fatal instanceof BatchRefusedError || fatal instanceof HostUnreachableError
      ? fatal
      : new Error(`import stopped: ${fatal instanceof Error ? fatal.message : String(fatal)}`, { cause: fatal });
  return { report, interrupted };
}
