import { parseArgs } from 'node:util';
import { FORMATS, type FieldMap, type Format } from './formats';
import type { ImportOptions } from './import-run';
import { isKnownZone, readTimeBound, type TimeSettings } from './source-time';

export const IMPORT_USAGE = `usage: sightline import FILE… --host URL --api-key phc_… [--format posthog|jsonl|csv|mixpanel|amplitude]
                        [--map field=path…] [--from DATE] [--to DATE] [--timezone ZONE] [--limit N]
                        [--rate EVENTS_PER_S] [--concurrency N] [--batch-bytes N] [--dry-run]
                        [--report FILE] [--checkpoint FILE] [--resume]
  FILE "-" reads standard input; a zip (Amplitude's export) is read as downloaded.
  Times without a zone (in the files and in --from/--to) are UTC, or in --timezone (an IANA zone, e.g. Europe/Berlin).
  --to with a bare date keeps that whole day. SIGHTLINE_HOST and SIGHTLINE_PROJECT_API_KEY stand in for --host and --api-key.
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

function bound(name: 'from' | 'to', raw: string | undefined, times: TimeSettings): number | null {
  if (raw === undefined) return null;
  const ms = readTimeBound(raw, times, name);
  if (ms === null) throw new UsageError(`--${name} must be a date or time (YYYY-MM-DD, or ISO 8601 such as 2024-05-03T10:00:00Z), got "${raw}".`);
  return ms;
}

/** The service's address: a URL with its scheme ("localhost:8000" would otherwise be read as a scheme). */
function hostUrl(raw: string): string {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new UsageError(`--host must be a URL starting with http:// or https:// (e.g. http://localhost:8000), got "${raw}".`);
  }
  return raw;
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
      timezone: { type: 'string' },
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
  if (host) hostUrl(host);
  const zone = values.timezone ?? 'UTC';
  if (!isKnownZone(zone)) throw new UsageError(`--timezone must be an IANA time zone such as Europe/Berlin or America/New_York, got "${zone}".`);
  // Older Mixpanel projects export `time` as seconds of the project's wall clock, not of UTC.
  const times: TimeSettings = { zone, epochIsLocal: format === 'mixpanel' && zone !== 'UTC' };
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
    times,
    fromMs: bound('from', values.from, times),
    toBeforeMs: bound('to', values.to, times),
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
