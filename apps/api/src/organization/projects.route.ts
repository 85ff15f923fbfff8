import { Router } from 'express';
import { listProjectsFor, type Project } from '@sightline/accounts';
import { requireScope } from '@sightline/auth';
import type { Sql } from '@sightline/postgres';

export function serializeProject(p: Project) {
  return {
    id: p.id,
    uuid: p.uuid,
    organization: p.organization_id,
    name: p.name,
    api_token: p.api_token,
    timezone: p.timezone,
    created_at: new Date(p.created_at).toISOString(),
  };
}

export function createProjectsRouter(db: Sql): Router {
  const router = Router();
  router.get('/api/projects', requireScope('project:read'), async (req, res) => {
    const results = (await listProjectsFor(db, req.principal!)).map(serializeProject);
    res.json({ count: results.length, next: null, previous: null, results });
  });
  return router;
}
