import type { RequestHandler } from 'express';
import { canAccessOrganization } from '@sightline/accounts';
import { errors } from '@sightline/http';
import { UUID_PATTERN } from '@sightline/json-input';

declare module 'express-serve-static-core' {
  interface Request {
    organizationId?: string;
  }
}

/**
 * A route outside any project acts on the organisation (its roles govern flag access in every
 * project; it creates projects; it runs the jobs), so a key restricted to projects is refused
 * there, as PostHog refuses such keys on every view not based on a project
 * (posthog/permissions.py, APIScopePermission.check_team_and_org_permissions). Routes declared
 * `projectRestrictedKeys: 'narrowed'` skip this: they answer and act within the key's projects.
 */
export const refuseProjectRestrictedKeys: RequestHandler = (req, _res, next) => {
  if (req.principal && req.principal.scopedTeams !== null)
    return next(errors.permissionDenied('API keys restricted to projects (scoped_teams) can only be used on the routes of those projects.'));
  next();
};

/**
 * `:organization_id` is `@current` or the caller's organisation id: another organisation's id is
 * 403, anything else 404. A key restricted to other organisations (`scoped_organizations`) gets 403.
 */
export const organizationAccess: RequestHandler = (req, _res, next) => {
  const principal = req.principal;
  if (!principal) return next(errors.notAuthenticated());
  const raw = String(req.params['organization_id']);
  const own = principal.organizationId;
  if (raw !== '@current' && raw.toLowerCase() !== own.toLowerCase()) {
    return next(UUID_PATTERN.test(raw) ? errors.permissionDenied('You do not have access to this organization.') : errors.notFound());
  }
  if (!canAccessOrganization(principal, own)) return next(errors.permissionDenied('You do not have access to this organization.'));
  req.organizationId = own;
  next();
};
