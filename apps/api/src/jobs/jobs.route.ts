import { errors } from '@sightline/http';
import { UnknownJobError, type JobOperator } from '@sightline/jobs';
import { ignoredBody } from '../http/body-fields';
import { RouteTable } from '../http/route-registry';

/**
 * The embedded service's operator route, which `npm run jobs` uses while the service runs (its
 * data directory is then open in this process only). Mounted only where the jobs run in the same
 * process (the all-in-one app); the distributed command reads the servers directly.
 *
 * - `GET /api/sightline/jobs/`: the status report (jobs, next runs, pending tasks).
 * - `POST /api/sightline/jobs/:job/run`: runs the job now; the answer is NDJSON, one
 *   `{"progress": line}` per batch, then `{"done": summary}` or `{"error": message}`.
 *
 * The person-event deletion is the only job: reading needs person:read, running person:write.
 */
export function createJobsRoutes(jobs: JobOperator): RouteTable {
  const routes = new RouteTable();
  const base = '/api/sightline/jobs';

  routes.get(base, { scope: 'person:read', summary: 'Status of the scheduled jobs (embedded service only)' }, async (_req, res) => {
    res.json(await jobs.status());
  });

  routes.post(
    `${base}/:job/run`,
    { scope: 'person:write', summary: 'Run a job now; NDJSON progress (embedded service only)', body: ignoredBody, example: () => ({}) },
    async (req, res) => {
      const job = String(req.params['job']);
      if (!jobs.names.includes(job)) throw errors.notFound(new UnknownJobError(job, jobs.names).message);
      res.status(200).type('application/x-ndjson');
      const line = (value: unknown) => res.write(`${JSON.stringify(value)}\n`);
      try {
        line({ done: await jobs.run(job, (progress) => line({ progress })) });
      } catch (error) {
        line({ error: error instanceof Error ? error.message : String(error) });
      }
      res.end();
    },
  );
  return routes;
}
