import { BatchRefusedError, RateLimiter, sendBatch } from './batch-sender';
import { CheckpointError, LineWatermark, readCheckpoint, writeCheckpoint, type Checkpoint } from './checkpoint';
import { checkEvent, type ImportEvent, type RejectReason } from './event-check';
import { mapRecord, type FieldMap, type Format } from './formats';
import { ImportReport } from './import-report';
import { describeSource, readSource, type Source } from './source-reader';

export interface ImportOptions {
  files: string[];
  host: string;
  apiKey: string;
  format: Format;
  map: FieldMap;
  fromMs: number | null;
  toMs: number | null;
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
  onSent(events: number): void;
  onRetry(reason: string, waitMs: number): void;
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
  bytes: number;
}

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
      onRetry: (reason, waitMs) => (report.retried++, progress.onRetry(reason, waitMs)),
    })
      .then(() => {
        watermarks[batch.file]!.acknowledged(batch.id);
        report.accepted += batch.events.length;
        progress.onSent(batch.events.length);
        saveCheckpoint();
      })
      .catch((error: unknown) => {
        fatal ??= error;
      })
      .finally(() => inFlight.delete(sending));
    inFlight.add(sending);
  };

  let accepted = 0;
  let interrupted = false;
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
      const reject = (reason: RejectReason) => {
        report.reject(reason, source.path, item.line);
        watermark.read(item.line);
      };
      if ('invalid' in item) {
        reject(item.invalid);
        continue;
      }
      const checked = checkEvent(mapRecord(options.format, item.record, options.map), source.identity ?? 'stdin', item.line);
      if (!checked.ok) {
        reject(checked.reason);
        continue;
      }
      const timeMs = Date.parse(checked.event.timestamp);
      if ((options.fromMs !== null && timeMs < options.fromMs) || (options.toMs !== null && timeMs > options.toMs)) {
        report.filteredOut++;
        watermark.read(item.line);
        continue;
      }
      report.count(checked.event);
      const text = JSON.stringify(checked.event satisfies ImportEvent);
      if (batch && (batch.events.length >= options.batchEvents || batch.bytes + text.length + 1 > options.batchBytes - ENVELOPE_BYTES)) {
        await dispatch(batch);
        batch = null;
      }
      if (!batch) {
        batch = { id: nextBatchId++, file: fileIndex, events: [], bytes: 0 };
        watermark.opened(batch.id, item.line);
      }
      batch.events.push(text);
      batch.bytes += text.length + 1;
      watermark.read(item.line);
      if (options.limit !== null && ++accepted >= options.limit) {
        await dispatch(batch);
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
  await Promise.all(inFlight);
  saveCheckpoint();
  if (fatal)
    throw fatal instanceof BatchRefusedError ? fatal : new Error(`import stopped: ${fatal instanceof Error ? fatal.message : String(fatal)}`, { cause: fatal });
  return { report, interrupted };
}
