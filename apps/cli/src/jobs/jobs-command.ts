import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { clickhouseLayout, createAnalyticsStore, migrateClickHouse } from '@sightline/clickhouse';
import type { allInOneEnv, ConfigOf } from '@sightline/config';
import { nextCronRun, readBullmqNextRun, type JobOperator, type JobsStatusReport } from '@sightline/jobs';
import { createLogger } from '@sightline/logger';
import { createJobOperator } from '@sightline/maintenance-jobs';
import { createMetrics } from '@sightline/metrics';
import { createMetadataStore, migratePostgres } from '@sightline/postgres';
import { readEmbeddedServiceMarker } from '@sightline/service-runner';

export const JOBS_USAGE = `usage: npm run jobs -- <command> [options]

commands:
  run <job>     run a job now (jobs: person-events-deletion), with progress; exit 0 when done
  status        pending tasks and the next scheduled run of each job

options:
  --url <url>        a running embedded service to go through (default: the one found in the
                     data directory, else http://127.0.0.1:$PORT when it answers)
  --key <phx_…>      personal API key for that service (default: SIGHTLINE_PERSONAL_API_KEY)
  --data-dir <dir>   the embedded data directory (default: SIGHTLINE_DATA_DIR, ./data)

With DATABASE_URL and CLICKHOUSE_URL set (distributed mode) the command works on those servers
(and reads the schedule from REDIS_URL). Otherwise it goes through the running embedded service,
or opens the data directory itself when the service is stopped.`;

export class JobsUsageError extends Error {}

export interface JobsCommand {
  action: 'run' | 'status';
  job: string | null;
  url: string | null;
  key: string | null;
  dataDir: string | null;
}

export function parseJobsArgs(argv: string[]): JobsCommand {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { url: { type: 'string' }, key: { type: 'string' }, 'data-dir': { type: 'string' } },
  });
  const [action, job, ...extra] = positionals;
  if (action !== 'run' && action !== 'status') throw new JobsUsageError(action === undefined ? 'a command is needed' : `unknown command "${action}"`);
  if (action === 'run' && job === undefined) throw new JobsUsageError('run needs a job name');
  const unexpected = action === 'status' ? [job, ...extra].find((a) => a !== undefined) : extra[0];
  if (unexpected !== undefined) throw new JobsUsageError(`unexpected argument "${unexpected}"`);
  return { action, job: job ?? null, url: values.url ?? null, key: values.key ?? null, dataDir: values['data-dir'] ?? null };
}

type Config = ConfigOf<typeof allInOneEnv>;

/** Where the command runs the jobs, said in its first line. */
interface Target {
  description: string;
  operator: JobOperator;
  close(): Promise<void>;
}

/** The jobs through a running embedded service's operator route. */
function serviceTarget(url: string, key: string | undefined): Target {
  if (!key) {
    throw new Error(
      `the embedded service at ${url} holds the data directory; pass its personal API key (--key phx_… or SIGHTLINE_PERSONAL_API_KEY) to run jobs through it`,
    );
  }
  const call = async (method: string, path: string) => {
    let response: Response;
    try {
      response = await fetch(new URL(path, url), { method, headers: { Authorization: `Bearer ${key}` } });
    } catch (error) {
      throw new Error(`the embedded service at ${url} did not answer (${(error as Error).message})`);
    }
    if (!response.ok) {
      const body = await response.text();
      let detail = body;
      try {
        detail = (JSON.parse(body) as { detail?: string }).detail ?? body;
      } catch {
        // not JSON: shown as it came
      }
      throw new Error(`the embedded service at ${url} answered ${response.status}: ${detail}`);
    }
    return response;
  };
  return {
    description: `the running embedded service at ${url}`,
    operator: {
      names: [],
      async run(name, onProgress) {
        const response = await call('POST', `/api/sightline/jobs/${encodeURIComponent(name)}/run`);
        let buffered = '';
        let outcome: { done?: Record<string, unknown>; error?: string } = {};
        const decoder = new TextDecoder();
        const take = (line: string) => {
          if (line.trim() === '') return;
          const message = JSON.parse(line) as { progress?: string; done?: Record<string, unknown>; error?: string };
          if (message.progress !== undefined) onProgress(message.progress);
          else outcome = message;
        };
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          buffered += decoder.decode(chunk, { stream: true });
          const lines = buffered.split('\n');
          buffered = lines.pop() ?? '';
          lines.forEach(take);
        }
        take(buffered);
        if (outcome.error !== undefined) throw new Error(outcome.error);
        if (!outcome.done) throw new Error(`the embedded service at ${url} stopped answering before the job finished`);
        return outcome.done;
      },
      status: async () => (await (await call('GET', '/api/sightline/jobs/')).json()) as JobsStatusReport,
    },
    close: async () => undefined,
  };
}

/** The jobs on the stores themselves: the distributed servers, or a stopped service's data directory. */
async function directTarget(config: Config, dataDir: string): Promise<Target> {
  const embedded = [!config.DATABASE_URL && 'PGlite', !config.CLICKHOUSE_URL && 'chdb'].filter(Boolean);
  const db = await createMetadataStore({ url: config.DATABASE_URL, dataDir, poolSize: 2 });
  const layout = clickhouseLayout(config.CLICKHOUSE_CLUSTER, config.CLICKHOUSE_DATABASE);
  const ch = createAnalyticsStore({
    url: config.CLICKHOUSE_URL,
    user: config.CLICKHOUSE_USER,
    password: config.CLICKHOUSE_PASSWORD,
    database: config.CLICKHOUSE_DATABASE,
    dataDir,
    layout,
  });
  try {
    await migratePostgres(db);
    await migrateClickHouse(ch, { layout });
  } catch (error) {
    await ch.close();
    await db.close();
    throw error;
  }
  const redisUrl = config.REDIS_URL;
  const operator = createJobOperator({
    db,
    ch,
    clickhouseLayout: layout,
    logger: createLogger({ service: 'jobs', level: 'warn' }),
    metrics: createMetrics(),
    // The schedule lives with the workers: BullMQ's in Redis, otherwise the in-process cron of
    // the embedded service, whose next time follows from the pattern alone.
    nextRun: (name, cron) => (redisUrl ? readBullmqNextRun({ redisUrl }, name) : Promise.resolve(nextCronRun(cron))),
  });
  return {
    description: embedded.length === 0 ? 'the servers of DATABASE_URL and CLICKHOUSE_URL' : `the data directory ${dataDir} (the service is not running)`,
    operator,
    close: async () => {
      await ch.close();
      await db.close();
    },
  };
}

/** Whether a Sightline service answers its health check at `url`. */
async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(new URL('/_health', url), { signal: AbortSignal.timeout(1500) });
    return response.status === 200 || response.status === 503;
  } catch {
    return false;
  }
}

async function chooseTarget(command: JobsCommand, config: Config): Promise<Target> {
  const key = command.key ?? config.SIGHTLINE_PERSONAL_API_KEY;
  if (command.url) return serviceTarget(command.url, key);
  const dataDir = resolve(command.dataDir ?? config.SIGHTLINE_DATA_DIR);
  if (config.DATABASE_URL && config.CLICKHOUSE_URL) return directTarget(config, dataDir);
  const running = readEmbeddedServiceMarker(dataDir);
  if (running) return serviceTarget(running.url, key);
  const local = `http://127.0.0.1:${config.PORT}`;
  if (await answers(local)) return serviceTarget(local, key);
  return directTarget(config, dataDir);
}

function formatStatus(status: JobsStatusReport): string {
  const lines = status.jobs.map((j) => `${j.name}: cron "${j.cron}" (UTC), next run ${j.next_run ?? 'not scheduled (no worker has registered it)'}`);
  lines.push(`pending person-event deletions: ${status.pending.count}`);
  for (const t of status.pending.tasks) {
    const state = t.started_at ? `started ${t.started_at}, attempt ${t.attempts}` : t.attempts > 0 ? `attempts ${t.attempts}` : 'waiting';
    lines.push(
      `  #${t.id} project ${t.team_id} person ${t.person_uuid} (${t.distinct_ids.join(', ') || 'no distinct ids'}) queued ${t.created_at}, ${state}` +
        (t.last_error ? `, last error: ${t.last_error}` : ''),
    );
  }
  if (status.pending.tasks.length < status.pending.count) lines.push(`  … and ${status.pending.count - status.pending.tasks.length} more`);
  return lines.join('\n');
}

/** Runs the command; answers the exit code (0 done, 1 failed). */
export async function runJobsCommand(command: JobsCommand, config: Config, out: (line: string) => void): Promise<number> {
  const target = await chooseTarget(command, config);
  try {
    if (command.action === 'status') {
      out(`jobs status (through ${target.description})`);
      out(formatStatus(await target.operator.status()));
      return 0;
    }
    const job = command.job!;
    out(`${job}: running now through ${target.description}`);
    const started = Date.now();
    const summary = await target.operator.run(job, out);
    out(
      `${job}: done in ${((Date.now() - started) / 1000).toFixed(1)} s: ${summary['tasks']} task(s), ${summary['eventsDeleted']} event(s) deleted, ` +
        `${summary['personRowsDeleted']} person-table entr(ies) deleted, ${summary['batches']} batch(es)`,
    );
    const next = (await target.operator.status()).jobs.find((j) => j.name === job);
    if (next) out(`${job}: next scheduled run ${next.next_run ?? 'not scheduled'}`);
    return 0;
  } finally {
    await target.close();
  }
}
