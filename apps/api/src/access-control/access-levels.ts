/** PostHog's access levels for a feature flag, lowest first (rbac/user_access_control.py). */
export const FLAG_ACCESS_LEVELS = ['none', 'viewer', 'editor', 'manager'] as const;
export type AccessLevel = (typeof FLAG_ACCESS_LEVELS)[number];
export const DEFAULT_FLAG_ACCESS_LEVEL: AccessLevel = 'editor';

/** The level bounds PostHog reports with a resource's access controls. */
export const DEFAULT_FLAG_ACCESS_LEVELS_INFO = {
  available_access_levels: [...FLAG_ACCESS_LEVELS],
  default_access_level: DEFAULT_FLAG_ACCESS_LEVEL,
  minimum_access_level: 'none' as AccessLevel,
  maximum_access_level: 'manager' as AccessLevel,
};

const rank = (level: AccessLevel) => FLAG_ACCESS_LEVELS.indexOf(level);
export const atLeast = (level: AccessLevel, required: AccessLevel) => rank(level) >= rank(required);
/** The highest of a non-empty list of levels. */
export const highest = (levels: AccessLevel[]) => levels.reduce((a, b) => (rank(b) > rank(a) ? b : a));
