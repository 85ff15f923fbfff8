/**
 * Scope objects PostHog knows (posthog/scopes.py); a key holds `<object>:<read|write>` strings or `*`.
 * `personal_api_key` is the power to manage keys through the API (see docs/http-api.md).
 */
export const SCOPE_OBJECTS = [
  'action',
  'access_control',
  'activity_log',
  'annotation',
  'batch_export',
  'batch_import',
  'cohort',
  'dashboard',
  'dashboard_template',
  'early_access_feature',
  'error_tracking',
  'event_definition',
  'experiment',
  'export',
  'feature_flag',
  'file_system',
  'file_system_shortcut',
  'group',
  'hog_function',
  'insight',
  'link',
  'logs',
  'notebook',
  'organization',
  'organization_member',
  'person',
  'persisted_folder',
  'personal_api_key',
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
  'warehouse_table',
  'warehouse_view',
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

/** Every `<object>:<action>` scope, in SCOPE_OBJECTS order. */
export const ALL_SCOPES: readonly Scope[] = SCOPE_OBJECTS.flatMap((object) => [`${object}:read` as Scope, `${object}:write` as Scope]);

/** `*` or a known `<object>:<read|write>`. */
export function isKnownScope(scope: string): boolean {
  return scope === '*' || (ALL_SCOPES as readonly string[]).includes(scope);
}
