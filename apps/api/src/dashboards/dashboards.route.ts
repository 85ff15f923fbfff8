import { errors } from '@sightline/http';
import {
  dashboardTiles,
  findDashboard,
  findInsight,
  insertDashboard,
  listDashboards,
  updateDashboard,
  type DashboardInput,
  type DashboardRow,
  type QueryProjectRow,
} from '@sightline/insights';
import type { Sql } from '@sightline/postgres';
import { parseBody, parseBoolean, parseList, parseString, queryInteger } from '../http/drf-fields';
import { limitOffsetPage } from '../http/pagination';
import { booleanField, charField, listField, objectBody } from '../http/body-fields';
import { loadById } from '../http/load-by-id';
import { RouteTable } from '../http/route-registry';
import { loadBasicUsers } from '@sightline/accounts';
import { loadInsightRelations, serializeInsights } from '../insights';
import { computeTiles, tileRefresh, type ComputeInsight, type TileOutcome, type TileRefresh } from './dashboard-tiles';

declare module 'express-serve-static-core' {
  interface Request {
    dashboard?: DashboardRow;
  }
}

function parseDashboardInput(body: Record<string, unknown>): DashboardInput {
  const input: DashboardInput = {};
  if (body['name'] !== undefined) input.name = parseString(body['name'], 'name', { allowBlank: true, maxLength: 400 });
  if (body['description'] !== undefined) input.description = parseString(body['description'], 'description', { allowBlank: true, maxLength: 65_535 });
  if (body['pinned'] !== undefined) input.pinned = parseBoolean(body['pinned'], 'pinned');
  if (body['deleted'] !== undefined) input.deleted = parseBoolean(body['deleted'], 'deleted');
  if (body['tags'] !== undefined) input.tags = [...new Set(parseList(body['tags'], 'tags').map((t, i) => parseString(t, `tags__${i}`, { maxLength: 255 })))];
  return input;
}

const dashboardFields = { name: charField(), description: charField(), pinned: booleanField, deleted: booleanField, tags: listField(charField()) };

/**
 * Dashboards (PostHog's DashboardSerializer fields), their tiles with the insights on them. A
 * retrieve computes each tile's insight through `computeInsight` (the saved-insight path, its
 * cache; `?refresh=true` recomputes), so a tile says its `result` and when it was computed.
 */
export function createDashboardsRoutes(db: Sql, computeInsight: ComputeInsight): RouteTable {
  const routes = new RouteTable();
  /** `compute`: the tiles' results (retrieve), with `refresh`; absent: tiles as stored (create, update). */
  const serialize = async (rows: DashboardRow[], withTiles: boolean, compute?: { project: QueryProjectRow; refresh: TileRefresh }) => {
    const users = await loadBasicUsers(
      db,
      rows.map((r) => r.created_by_id),
    );
    return Promise.all(
      rows.map(async (row) => {
        const base = {
          id: row.id,
          name: row.name,
          description: row.description,
          pinned: row.pinned,
          created_at: new Date(row.created_at).toISOString(),
          created_by: row.created_by_id === null ? null : (users.get(row.created_by_id) ?? null),
          deleted: row.deleted,
          creation_mode: row.creation_mode,
          tags: row.tags ?? [],
          restriction_level: 21,
          effective_privilege_level: 37,
          user_access_level: 'editor',
          is_shared: false,
        };
        if (!withTiles) return base;
        const tiles = await dashboardTiles(db, row.id);
        const insights = (await Promise.all(tiles.map((t) => findInsight(db, row.team_id, t.insight_id)))).filter((i) => i !== null);
        const outcomes: Map<number, TileOutcome> = compute ? await computeTiles(computeInsight, compute.project, insights, compute.refresh) : new Map();
        const serialized = new Map(
          serializeInsights(insights, await loadInsightRelations(db, insights), (insight) => {
            const outcome = outcomes.get(insight.id);
            return outcome && 'answer' in outcome ? outcome.answer : {};
          }).map((i) => [i.id, i]),
        );
        return {
          ...base,
          tiles: tiles.map((t) => {
            const outcome = outcomes.get(t.insight_id);
            return {
              id: t.tile_id,
              layouts: t.layouts,
              color: t.color,
              insight: serialized.get(t.insight_id) ?? null,
              text: null,
              error: outcome && 'error' in outcome ? outcome.error : null,
            };
          }),
        };
      }),
    );
  };
  const loadDashboard = loadById('dashboard_id', 'dashboard', (teamId, id) => findDashboard(db, teamId, id));
  routes.inProject((project) => {
    const base = '/dashboards';
    const read = { scope: 'dashboard:read' } as const;
    const write = { scope: 'dashboard:write' } as const;
    project.get(base, { ...read, summary: 'List dashboards', list: true }, async (req, res) => {
      const limit = queryInteger(req.query['limit'], 100, 1);
      const offset = queryInteger(req.query['offset'], 0, 0);
      const { rows, count } = await listDashboards(db, req.project!.id, { limit, offset });
      res.json(limitOffsetPage(req, { count, limit, offset, results: await serialize(rows, false) }));
    });
    project.post(
      base,
      { ...write, summary: 'Create a dashboard', body: objectBody(dashboardFields, ['name']), example: () => ({ name: 'Weekly numbers' }) },
      async (req, res) => {
        const body = parseBody(req.body ?? {});
        if (body['name'] === undefined) throw errors.validation('This field is required.', 'name', 'required');
        const row = await insertDashboard(db, req.project!.id, parseDashboardInput(body), req.principal!.userId);
        res.status(201).json((await serialize([row], true))[0]);
      },
    );
    project.get(
      `${base}/:dashboard_id`,
      {
        ...read,
        summary: 'Retrieve a dashboard with its tiles, each computed (refresh=true recomputes, refresh=force_cache answers only cached results)',
        throttle: 'clickhouse',
      },
      loadDashboard,
      async (req, res) => {
        res.json((await serialize([req.dashboard!], true, { project: req.project!, refresh: tileRefresh(req.query['refresh']) }))[0]);
      },
    );
    project.patch(
      `${base}/:dashboard_id`,
      { ...write, summary: 'Update a dashboard', body: objectBody(dashboardFields), example: () => ({ description: 'changed' }) },
      loadDashboard,
      async (req, res) => {
        const row = await updateDashboard(db, req.project!.id, req.dashboard!.id, parseDashboardInput(parseBody(req.body ?? {})));
        res.json((await serialize([row!], true))[0]);
      },
    );
    project.delete(`${base}/:dashboard_id`, { ...write, summary: 'Refused: PATCH {"deleted": true} removes a dashboard' }, loadDashboard, () => {
      throw errors.methodNotAllowed('DELETE');
    });
  });
  return routes;
}
