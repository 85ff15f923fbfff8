import fs from 'node:fs';
import { resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { BatchRefusedError, HostUnreachableError } from './import/batch-sender';
import { CheckpointError } from './import/checkpoint';
import { estimateProgress, IMPORT_USAGE, parseImportArgs, runImport, UsageError, type ImportProgress } from './import';
import { formatDuration } from './import/progress-estimate';

/** How often a non-TTY run logs a progress line. */
const LOG_EVERY_MS = 5_000;
/** Retries shown as they happen on a terminal (later ones only count in the bar). */
const RETRIES_SHOWN = 3;

/**
 * Progress on the terminal: a bar on a TTY (share done, events/s, MB, time left, retries), a log
 * line every few seconds otherwise. The share counts events when their number is known
 * (--limit), else bytes read; the time left is the events still to send at the rate they were
 * sent (progress-estimate.ts). Notices and the first retries are printed at once either way.
 */
function createProgress(totalBytes: number | null, totalEvents: number | null, isTTY: boolean): ImportProgress & { stop(): void } {
  const started = Date.now();
  let bytes = 0;
  let valid = 0;
  let sent = 0;
  let retries = 0;
  const rate = () => Math.round(sent / Math.max(0.001, (Date.now() - started) / 1000));
  const mb = (n: number) => (n / 1024 / 1024).toFixed(1);
  const estimate = () => estimateProgress({ totalEvents, totalBytes, bytesRead: bytes, eventsRead: valid, eventsSent: sent, elapsedMs: Date.now() - started });
  const say = (text: string) => process.stderr.write(`${isTTY ? '\r\x1b[K' : ''}import: ${text}\n`);
  if (isTTY && (totalBytes || totalEvents)) {
    const bar = new SingleBar({
      format: 'importing [{bar}] {percentage}% | {sent} events | {rate} ev/s | {mb} MB | ETA {eta_text} | retries {retries}',
      hideCursor: true,
    });
    bar.start(100, 0, { sent: 0, rate: 0, mb: '0.0', eta_text: '?', retries: 0 });
    const refresh = () => {
      const { percent, etaSeconds } = estimate();
      bar.update(Math.floor(percent ?? 0), { sent, rate: rate(), mb: mb(bytes), eta_text: formatDuration(etaSeconds), retries });
    };
    return {
      onBytes: (n) => ((bytes += n), refresh()),
      onValid: (n) => void (valid = n),
      onSent: (n) => ((sent += n), refresh()),
      onRetry: (reason, waitMs) => {
        retries += 1;
        if (retries <= RETRIES_SHOWN) say(`retrying in ${Math.round(waitMs / 100) / 10}s after ${reason}`);
        refresh();
      },
      onNotice: (text) => (say(text), refresh()),
      stop: () => bar.stop(),
    };
  }
  const log = () => {
    const { percent, etaSeconds } = estimate();
    const share = percent === null ? '' : `${percent.toFixed(1)}%, `;
    const left = etaSeconds === null ? '' : `, ETA ${formatDuration(etaSeconds)}`;
    process.stderr.write(`import: ${share}${sent} events sent, ${rate()} ev/s, ${mb(bytes)} MB read, ${retries} retries${left}\n`);
  };
  const timer = setInterval(log, LOG_EVERY_MS);
  return {
    onBytes: (n) => void (bytes += n),
    onValid: (n) => void (valid = n),
    onSent: (n) => void (sent += n),
    onRetry: (reason, waitMs) => {
      retries += 1;
      say(`retrying in ${Math.round(waitMs / 100) / 10}s after ${reason}`);
    },
    onNotice: say,
    stop: () => clearInterval(timer),
  };
}

async function importCommand(argv: string[]): Promise<number> {
  const options = parseImportArgs(argv, process.env);
  const totalBytes = options.files.includes('-') ? null : options.files.reduce((n, f) => n + fs.statSync(f).size, 0);
  const progress = createProgress(totalBytes, options.limit, process.stderr.isTTY === true);
  const stop = new AbortController();
  // Ctrl-C: stop reading, let batches in flight finish, write the checkpoint; a second one ends at once.
  process.once('SIGINT', () => {
    process.stderr.write('\nimport: stopping after the batches in flight (Ctrl-C again to quit now)\n');
    stop.abort();
    process.once('SIGINT', () => process.exit(130));
  });
  const started = Date.now();
  try {
    const { report, interrupted } = await runImport(options, progress, stop.signal);
    progress.stop();
    const seconds = (Date.now() - started) / 1000;
    if (options.reportPath) {
      fs.writeFileSync(options.reportPath, JSON.stringify(report, null, 2));
      fs.writeFileSync(`${options.reportPath}.txt`, `${report.toText()}\n`);
    }
    process.stdout.write(
      [
        options.dryRun ? 'dry run: nothing was sent' : interrupted ? 'import interrupted' : 'import finished',
        report.toText(),
        `duration: ${seconds.toFixed(1)} s   rate: ${Math.round((options.dryRun ? report.valid : report.accepted) / Math.max(seconds, 0.001))} events/s`,
        interrupted && options.checkpointPath ? `resume with: --checkpoint ${options.checkpointPath} --resume` : '',
      ]
        .filter(Boolean)
        .join('\n') + '\n',
    );
    if (interrupted) return 130;
    return report.rejectedCount > 0 || report.droppedCount > 0 ? 2 : 0;
  } finally {
    progress.stop();
  }
}

/** `sightline jobs …` (`npm run jobs -- …`): run the scheduled jobs now, or show their status. */
async function jobsCommand(argv: string[]): Promise<number> {
  // Loaded here: the stores and the worker's jobs are not needed to import files.
  const [{ JOBS_USAGE, JobsUsageError, parseJobsArgs, runJobsCommand }, { allInOneEnv, parseConfig }] = await Promise.all([
    import('./jobs/jobs-command'),
    import('@sightline/config'),
  ]);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${JOBS_USAGE}\n`);
    return 0;
  }
  try {
    const command = parseJobsArgs(argv);
    // The same settings the services read: the data directory, or the distributed servers.
    const config = parseConfig(allInOneEnv, process.env);
    return await runJobsCommand(command, config, (line) => process.stdout.write(`${line}\n`));
  } catch (error) {
    if (error instanceof JobsUsageError || (error instanceof TypeError && (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`sightline jobs: ${error.message}\n${JOBS_USAGE}\n`);
      return 2;
    }
    process.stderr.write(`sightline jobs: failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/** `sightline admin …` (`npm run admin -- …`): keys and projects on the store the server uses (DATABASE_URL, else the embedded data directory). */
async function adminCommand(argv: string[]): Promise<number> {
  // Loaded here, as for jobs: importing files needs none of it.
  const [{ ADMIN_USAGE, runAdminCommand }, { allInOneEnv, parseConfig, postgresEnv, redisEnv }, { createMetadataStore, migratePostgres }] = await Promise.all([
    import('./admin'),
    import('@sightline/config'),
    import('@sightline/postgres'),
  ]);
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${ADMIN_USAGE}\n`);
    return argv.length === 0 ? 1 : 0;
  }
  try {
    const config = parseConfig({ ...postgresEnv, ...redisEnv, SIGHTLINE_DATA_DIR: allInOneEnv.SIGHTLINE_DATA_DIR }, process.env);
    const db = await createMetadataStore({ url: config.DATABASE_URL, dataDir: resolve(config.SIGHTLINE_DATA_DIR), poolSize: 2 });
    // Distributed api processes hear key changes on Redis; the embedded server is stopped while this runs.
    const principalChanges =
      config.DATABASE_URL && config.REDIS_URL
        ? (await import('@sightline/bus')).createRedisInvalidation(config.REDIS_URL, {
            channel: (await import('@sightline/accounts')).PRINCIPAL_CHANGES_CHANNEL,
          })
        : undefined;
    try {
      await migratePostgres(db);
      return await runAdminCommand(argv, db, (text) => process.stdout.write(`${text}\n`), { principalChanges });
    } finally {
      await principalChanges?.close();
      await db.close();
    }
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`sightline admin: ${error.message}\n${ADMIN_USAGE}\n`);
      return 1;
    }
    process.stderr.write(`sightline admin: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'jobs') return jobsCommand(rest);
  if (command === 'admin') return adminCommand(rest);
  if (command !== 'import') {
    process.stderr.write(
      `${IMPORT_USAGE}\n\nsightline jobs run <job> | status (npm run jobs -- --help)\nsightline admin keys|projects … (npm run admin -- --help)\n`,
    );
    return command === undefined || command === '--help' || command === '-h' ? 0 : 1;
  }
  try {
    return await importCommand(rest);
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`sightline import: ${error.message}\n${IMPORT_USAGE}\n`);
      return 1;
    }
    if (error instanceof CheckpointError || error instanceof BatchRefusedError || error instanceof HostUnreachableError) {
      process.stderr.write(`sightline import: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`sightline import: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/** An error nothing handled ends the command at once, exit 1, saying what it was (the service runner does the same). */
const fail = (error: unknown) => {
  process.stderr.write(`sightline: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
};
process.on('uncaughtException', fail);
process.on('unhandledRejection', fail);

main(process.argv.slice(2)).then((code) => process.exit(code), fail);
