/** Scope objects PostHog knows; a key holds `<object>:<read|write>` strings or `*`. */
export const SCOPE_OBJECTS = [
  'action',
  'access_control',
  'activity_log',
  'annotation',
  'batch_export',
  'cohort',
  'dashboard',
  'early_access_feature',
  'event_definition',
  'experiment',
  'export',
  'feature_flag',
  'group',
  'insight',
  'notebook',
  'organization',
  'organization_member',
  'person',
  'plugin',
  'project',
  'property_definition',
  'query',
  'session_recording',
  'session_recording_playlist',
  'sharing_configuration',
  'subscription',
  'survey',
  'user',
  'webhook',
] as const;

export type ScopeObject = (typeof SCOPE_OBJECTS)[number];
export type Scope = `${ScopeObject}:${'read' | 'write'}`;

/** `*` grants everything; `x:write` implies `x:read`. */
export function hasScope(granted: readonly string[], required: Scope): boolean {
  if (granted.includes('*') || granted.includes(required)) return true;
  const [object, action] = required.split(':');
  return action === 'read' && granted.includes(`${object}:write`);
}
