import type { Sql } from '@sightline/postgres';

/** The live experiments of each flag, in id order. */
export async function experimentsOfFlags(db: Sql, flagIds: readonly number[]): Promise<{ id: number; feature_flag_id: number }[]> {
  return db.query<{ id: number; feature_flag_id: number }>(
    'SELECT id, feature_flag_id FROM experiments WHERE feature_flag_id = ANY($1::int[]) AND NOT deleted ORDER BY id',
    [flagIds],
  );
}

/** The analytics dashboards each flag is linked to, in dashboard id order. */
export async function dashboardsOfFlags(db: Sql, flagIds: readonly number[]): Promise<{ feature_flag_id: number; dashboard_id: number }[]> {
  return db.query<{ feature_flag_id: number; dashboard_id: number }>(
    'SELECT feature_flag_id, dashboard_id FROM feature_flag_dashboards WHERE feature_flag_id = ANY($1::int[]) ORDER BY dashboard_id',
    [flagIds],
  );
}
