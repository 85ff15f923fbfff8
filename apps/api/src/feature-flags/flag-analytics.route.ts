import { ignoredBody } from '../http/body-fields';
import { RouteTable } from '../http/route-registry';
import { serializeCohorts } from '../cohorts';
import { FLAG_PATH, loadFlag, type FeatureFlagDeps } from './flag-context';
import { createStaticCohortForFlag } from './flag-static-cohort';
import { createFlagUsageDashboard, enrichFlagUsageDashboard } from './flag-analytics.service';

/**
 * `dashboard`, `enrich_usage_dashboard` and `create_static_cohort_for_flag`. PostHog
 * declares no scope for these actions and so refuses personal API keys on them ("This
 * action does not support Personal API Key access"): only its web sessions may call
 * them. Sightline's management API has personal keys only, so that rule would make
 * them unreachable; they require feature_flag:write, the scope of the flag they act on.
 */
export function createFlagAnalyticsRoutes(deps: FeatureFlagDeps): RouteTable {
  const { db } = deps;
  const routes = new RouteTable();
  routes.inProject((project) => {
    const base = FLAG_PATH;
    const write = { scope: 'feature_flag:write' } as const;
    const editor = loadFlag(db, 'editor');

    project.post(
      `${base}/:id/dashboard`,
      { ...write, summary: "Create the flag's usage dashboard", body: ignoredBody, example: () => ({}) },
      editor,
      async (req, res) => {
        const outcome = await createFlagUsageDashboard(db, req.flag!, req.principal!.userId);
        if (!outcome.ok) {
          req.log.error({ err: outcome.cause, flagId: req.flag!.id }, 'usage dashboard could not be created');
          res.status(400).json({ success: false, error: outcome.error });
          return;
        }
        res.json({ success: true });
      },
    );

    project.post(
      `${base}/:id/enrich_usage_dashboard`,
      { ...write, summary: "Add the enriched insights to the flag's usage dashboard", body: ignoredBody, example: () => ({}) },
      editor,
      async (req, res) => {
        const outcome = await enrichFlagUsageDashboard({ db, ch: deps.ch }, req.flag!, req.principal!.userId);
        if (!outcome.ok) {
          if (outcome.cause) req.log.error({ err: outcome.cause, flagId: req.flag!.id }, 'usage dashboard could not be enriched');
          res.status(400).json({ success: false, error: outcome.error });
          return;
        }
        res.json({ success: true });
      },
    );

    project.post(
      `${base}/:id/create_static_cohort_for_flag`,
      { ...write, summary: 'Create a static cohort of the persons the flag matches', body: ignoredBody, example: () => ({}), throttle: 'clickhouse' },
      editor,
      async (req, res) => {
        const cohort = await createStaticCohortForFlag({ db, ch: deps.ch }, req.flag!, req.principal!.userId, new Date(deps.now()));
        res.status(201).json({ cohort: (await serializeCohorts(db, [cohort]))[0] });
      },
    );
  });
  return routes;
}
