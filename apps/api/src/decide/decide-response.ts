import { randomUUID } from 'node:crypto';
import type { ProjectSdkSettings } from '@sightline/accounts';
import type { FlagResult } from '@sightline/flags';
import { buildRemoteConfig } from '../remote-config/remote-config';

/**
 * Response shapes of /decide and /flags by version (docs/http-api.md#decide-response; PostHog: rust/feature-flags/src/api/types.rs):
 * - `flags-v2`: `flags` map of {key, enabled, variant, reason, metadata} (/flags v>=2, /decide v>=4)
 * - `v3`: `featureFlags` with false values + `featureFlagPayloads` (/flags v=1, /decide v=3)
 * - `v2`: `featureFlags` of enabled flags only (/decide v=2)
 * - `v1`: `featureFlags` as the list of enabled keys (/decide v=1 or no/unknown version)
 */
export type ResponseShape = 'flags-v2' | 'v3' | 'v2' | 'v1';

export interface ShapeChoice {
  shape: ResponseShape;
  withConfig: boolean;
}

const bool = (value: unknown) => value === 'true' || value === '1' || value === 'yes';

function version(query: Record<string, unknown>): number | null {
  const v = Number(query['v']);
  return typeof query['v'] === 'string' && Number.isFinite(v) ? v : null;
}

/** /flags: no v and no config means v=2 with config (PostHog: rust/feature-flags/src/api/endpoint.rs). */
export function flagsShape(query: Record<string, unknown>): ShapeChoice {
  const v = version(query);
  if (v === null && query['config'] === undefined) return { shape: 'flags-v2', withConfig: true };
  return { shape: v !== null && v >= 2 ? 'flags-v2' : 'v3', withConfig: bool(query['config']) };
}

/** /decide always carries the config. */
export function decideShape(query: Record<string, unknown>): ShapeChoice {
  const v = version(query);
  const shape: ResponseShape = v === null ? 'v1' : v >= 4 ? 'flags-v2' : v >= 3 ? 'v3' : v >= 2 ? 'v2' : 'v1';
  return { shape, withConfig: true };
}

/** A project's settings as a new project has them (everything but autocapture off). */
export const DEFAULT_SDK_SETTINGS: ProjectSdkSettings = {
  autocapture_opt_out: false,
  autocapture_exceptions_opt_in: false,
  autocapture_web_vitals_opt_in: false,
  capture_performance_opt_in: false,
  capture_dead_clicks: false,
  heatmaps_opt_in: false,
};

/**
 * The config part of /decide (and /flags?config=true): the project's remote config, which
 * posthog-js now loads separately, with the legacy decide-only fields (PostHog:
 * rust/feature-flags/src/handler/config_response_builder.rs).
 */
export function configFields(settings: ProjectSdkSettings = DEFAULT_SDK_SETTINGS): Record<string, unknown> {
  const { token: _token, hasFeatureFlags: _has, productTours: _tours, ...shared } = buildRemoteConfig('', settings, true);
  return { config: { enable_collect_everything: true }, toolbarParams: {}, isAuthenticated: false, flagsPersistenceDefault: false, ...shared };
}

export function buildFlagsResponse(
  results: Iterable<FlagResult>,
  errorsWhileComputingFlags: boolean,
  choice: ShapeChoice,
  settings: ProjectSdkSettings = DEFAULT_SDK_SETTINGS,
): Record<string, unknown> {
  // Flags that could not be computed are left out, so clients keep the values they had.
  const computed = [...results].filter((r) => !r.failed);
  const body: Record<string, unknown> = {};
  switch (choice.shape) {
    case 'flags-v2':
      body['flags'] = Object.fromEntries(
        computed.map((r) => [
          r.key,
          {
            key: r.key,
            enabled: r.enabled,
            variant: r.variant,
            reason: r.reason,
            // No payload: the key is left out, as PostHog's FlagDetailsMetadata skips a None payload
            // (posthog-node then reports no payload at all rather than a null one).
            metadata:
              r.payload === null || r.payload === undefined
                ? { id: r.id, version: r.version, description: r.description }
                : { id: r.id, version: r.version, description: r.description, payload: r.payload },
          },
        ]),
      );
      break;
    case 'v3':
      body['featureFlags'] = Object.fromEntries(computed.map((r) => [r.key, r.variant ?? r.enabled]));
      body['featureFlagPayloads'] = Object.fromEntries(computed.filter((r) => r.enabled && r.payload !== null).map((r) => [r.key, r.payload]));
      break;
    case 'v2':
      body['featureFlags'] = Object.fromEntries(computed.filter((r) => r.enabled).map((r) => [r.key, r.variant ?? true]));
      break;
    case 'v1':
      body['featureFlags'] = computed.filter((r) => r.enabled).map((r) => r.key);
      break;
  }
  body['errorsWhileComputingFlags'] = errorsWhileComputingFlags;
  body['requestId'] = randomUUID();
  if (choice.shape === 'flags-v2') body['evaluatedAt'] = Date.now();
  return choice.withConfig ? { ...configFields(settings), ...body } : body;
}
