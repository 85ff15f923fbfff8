import type { RequestHandler } from 'express';
import { canAccessProject, findProjectById, listProjectsFor, type ProjectTokenLookup } from '@sightline/accounts';
import { localEvaluationBody, type FlagDefinitionsCache } from '@sightline/flag-store';
import { errors } from '@sightline/http';
import type { Sql } from '@sightline/postgres';
import { hiddenFlagIds } from '../feature-flags';
import { RouteTable } from '../http/route-registry';

export interface LocalEvaluationRouteDeps {
  db: Sql;
  definitions: FlagDefinitionsCache;
  projectTokens: ProjectTokenLookup;
}

/**
 * Flag definitions for server SDKs' local evaluation (posthog-node polls them), with a personal
 * API key holding feature_flag:read; an ETag lets an unchanged poll answer 304.
 */
export function createLocalEvaluationRoutes(deps: LocalEvaluationRouteDeps): RouteTable {
  const definitionsHandler: RequestHandler = async (req, res) => {
    const principal = req.principal!;
    const token = typeof req.query['token'] === 'string' && req.query['token'] !== '' ? req.query['token'] : null;
    let project;
    if (token !== null) {
      const teamId = await deps.projectTokens(token);
      project = teamId === null ? null : await findProjectById(deps.db, teamId);
      if (!project) throw errors.authenticationFailed('Project API key invalid. You can find your project API key in your project settings.');
    } else project = (await listProjectsFor(deps.db, principal))[0] ?? null;
    if (!project || !canAccessProject(principal, project)) throw errors.permissionDenied('You do not have access to this project.');
    const { definitions } = await deps.definitions.get(project.id);
    // Flags the key's user has no access to are left out, as from every other read of flags.
    // PostHog serves every flag here; its definitions are what access "none" hides (conditions,
    // payloads), and posthog-node asks the server about a flag it does not have.
    const hidden = new Set(await hiddenFlagIds(deps.db, project.id, principal.userId));
    const visible = hidden.size === 0 ? definitions : { ...definitions, flags: definitions.flags.filter((flag) => !hidden.has(flag.id)) };
    const body = localEvaluationBody(visible, 'send_cohorts' in req.query);
    res.setHeader('ETag', body.etag);
    res.setHeader('Cache-Control', 'private, no-cache');
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === body.etag)) return void res.status(304).end();
    res.type('application/json').send(body.text);
  };

  // Answers only a project the key may use.
  const meta = {
    scope: 'feature_flag:read',
    summary: "The project's flag definitions for SDK local evaluation (ETag; ?token= names the project)",
    projectRestrictedKeys: 'narrowed',
  } as const;
  return new RouteTable().get('/flags/definitions', meta, definitionsHandler).get('/api/feature_flag/local_evaluation', meta, definitionsHandler);
}
