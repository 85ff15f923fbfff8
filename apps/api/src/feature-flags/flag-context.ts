import type { RequestHandler } from 'express';
import type { ClickHouseClient } from '@sightline/clickhouse';
import { errors } from '@sightline/http';
import type { MetadataStore } from '@sightline/postgres';
import { parseObjectId } from '../http/load-by-id';
import { atLeast, type AccessLevel } from '../access-control';
import { flagAccessLevels } from './flag-access-levels';
import { findFlag, type FlagRow } from './feature-flags.repository';

/**
 * Told after every write that changes what a flag evaluates to (create, update, soft
 * delete), so cached flag definitions are dropped. The flag-evaluation side provides it.
 */
export interface FlagChangeNotifier {
  flagsChanged(teamId: number): Promise<void>;
}

export interface FeatureFlagDeps {
  db: MetadataStore;
  ch: ClickHouseClient;
  now: () => number;
  flagChanges?: FlagChangeNotifier;
}

declare module 'express-serve-static-core' {
  interface Request {
    flag?: FlagRow;
    flagAccess?: AccessLevel;
  }
}

/** Where a project's feature flags are, under either project prefix. */
export const FLAG_PATH = '/feature_flags';

/**
 * Loads `:id` (a flag of req.project, deleted or not) into req.flag with the caller's
 * access level, refusing callers below `required` the way PostHog's access control does.
 */
export function loadFlag(db: MetadataStore, required: AccessLevel, param = 'id'): RequestHandler {
  return async (req, _res, next) => {
    const id = parseObjectId(req.params[param]);
    const flag = id === null ? null : await findFlag(db, req.project!.id, id);
    if (!flag) return next(errors.notFound());
    const level = (await flagAccessLevels(db, req.project!.id, req.principal!.userId, [flag])).get(flag.id)!;
    if (!atLeast(level, required)) return next(errors.permissionDenied(`You do not have ${required} access to this resource.`));
    req.flag = flag;
    req.flagAccess = level;
    next();
  };
}

/** Tells the evaluation side; a failure is logged, never turned into a failed write. */
export async function notifyFlagsChanged(deps: FeatureFlagDeps, teamId: number, log: { error: (o: object, m: string) => void }): Promise<void> {
  if (!deps.flagChanges) return;
  try {
    await deps.flagChanges.flagsChanged(teamId);
  } catch (err) {
    log.error({ err, teamId }, 'could not announce a flag change; decide may serve the previous definition until its cache refreshes');
  }
}
