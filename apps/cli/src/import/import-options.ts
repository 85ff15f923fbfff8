import { parseArgs } from 'node:util';
import { FORMATS, type FieldMap, type Format } from './formats';
import type { ImportOptions } from './import-run';

export const IMPORT_USAGE = `usage: sightline import FILE… --host URL --api-key phc_… [--format posthog|jsonl|csv|mixpanel|amplitude]
                        [--map field=path…] [--from DATE] [--to DATE] [--limit N]
                        [--rate EVENTS_PER_S] [--concurrency N] [--batch-bytes N] [--dry-run]
                        [--report FILE] [--checkpoint FILE] [--resume]
  FILE "-" reads standard input. SIGHTLINE_HOST and SIGHTLINE_PROJECT_API_KEY stand in for --host and --api-key.
  Exit codes: 0 everything sent, 1 stopped by an error, 2 some lines were rejected, 130 interrupted (resume with --resume).`;

export class UsageError extends Error {}

/** The largest /batch/ body the service takes is 20 MiB; the default stays well below. */
const MAX_BATCH_BYTES = 20 * 1024 * 1024;

function positive(name: string, raw: string | undefined, fallback: number | null, max = Number.MAX_SAFE_INTEGER): number | null {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > max) throw new UsageError(`--${name} must be a number from 1 to ${max}, got "${raw}".`);
  return n;
}

function date(name: string, raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const ms = Date.parse(raw);
  if (!Number.isFinite(ms)) throw new UsageError(`--${name} must be a date (YYYY-MM-DD or ISO 8601), got "${raw}".`);
  return ms;
}

/** The command line and environment as import options; every problem is a UsageError naming the flag. */
export function parseImportArgs(argv: string[], env: NodeJS.ProcessEnv): ImportOptions & { reportPath: string | null } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      host: { type: 'string' },
      'api-key': { type: 'string' },
      format: { type: 'string', default: 'posthog' },
      map: { type: 'string', multiple: true },
      from: { type: 'string' },
      to: { type: 'string' },
      limit: { type: 'string' },
      rate: { type: 'string' },
      concurrency: { type: 'string' },
      'batch-bytes': { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      report: { type: 'string' },
      checkpoint: { type: 'string' },
      resume: { type: 'boolean', default: false },
    },
  });
  if (positionals.length === 0) throw new UsageError('name at least one FILE (or - for standard input).');
  const format = values.format as Format;
  if (!FORMATS.includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}, got "${values.format}".`);
  const host = values.host ?? env['SIGHTLINE_HOST'];
  const apiKey = values['api-key'] ?? env['SIGHTLINE_PROJECT_API_KEY'];
  if (!values['dry-run']) {
    if (!host) throw new UsageError('--host (or SIGHTLINE_HOST) is required.');
    if (!apiKey) throw new UsageError('--api-key (or SIGHTLINE_PROJECT_API_KEY) is required.');
  }
  const map: Record<string, string> = {};
  for (const entry of values.map ?? []) {
    const match = /^([$\w]+)=(.+)$/.exec(entry);
    if (!match) throw new UsageError(`--map takes field=path, got "${entry}".`);
    map[match[1]!] = match[2]!;
  }
  if (positionals.filter((p) => p === '-').length > 1) throw new UsageError('standard input (-) can be read once.');
  const rate = positive('rate', values.rate, null);
  return {
    files: positionals,
    host: host ?? '',
    apiKey: apiKey ?? '',
    format,
    map: map as FieldMap,
    fromMs: date('from', values.from),
    toMs: date('to', values.to),
    limit: positive('limit', values.limit, null),
    rate,
    concurrency: positive('concurrency', values.concurrency, 4, 64)!,
    batchBytes: positive('batch-bytes', values['batch-bytes'], 5 * 1024 * 1024, MAX_BATCH_BYTES)!,
    // Under --rate a batch is at most one second's worth, so the limit holds from the first request.
    batchEvents: rate === null ? 10_000 : Math.max(1, Math.min(10_000, Math.floor(rate))),
    dryRun: values['dry-run'],
    checkpointPath: values.checkpoint ?? null,
    resume: values.resume,
    maxAttempts: 30,
    reportPath: values.report ?? null,
  };
}
