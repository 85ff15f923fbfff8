import type { ProjectSdkSettings } from '@sightline/accounts';

/** Where posthog-js sends events once it has the config (PostHog's NEW_ANALYTICS_CAPTURE_ENDPOINT). */
export const ANALYTICS_ENDPOINT = '/i/v0/e/';

/**
 * The remote config posthog-js loads at init (`/array/<token>/config[.js]`), built as PostHog's
 * posthog/models/remote_config.py `build_config` does from the project's settings. Sightline has
 * no session recording (`/s/`) or surveys (`/api/surveys/`) endpoint, so both are always off and
 * the SDK never asks for them; site apps do not exist either.
 */
export function buildRemoteConfig(token: string, settings: ProjectSdkSettings, hasFeatureFlags: boolean): Record<string, unknown> {
  return {
    token,
    supportedCompression: ['gzip', 'gzip-js'],
    hasFeatureFlags,
    captureDeadClicks: settings.capture_dead_clicks,
    capturePerformance: capturePerformance(settings),
    autocapture_opt_out: settings.autocapture_opt_out,
    autocaptureExceptions: settings.autocapture_exceptions_opt_in,
    analytics: { endpoint: ANALYTICS_ENDPOINT },
    elementsChainAsString: true,
    errorTracking: { autocaptureExceptions: settings.autocapture_exceptions_opt_in, suppressionRules: [] },
    sessionRecording: false,
    heatmaps: settings.heatmaps_opt_in,
    surveys: false,
    productTours: false,
    // Old SDKs read it; identified-only person profiles are the default everywhere now.
    defaultIdentifiedOnly: true,
    siteApps: [],
  };
}

function capturePerformance(settings: ProjectSdkSettings): false | Record<string, unknown> {
  if (!settings.capture_performance_opt_in && !settings.autocapture_web_vitals_opt_in) return false;
  return { network_timing: settings.capture_performance_opt_in, web_vitals: settings.autocapture_web_vitals_opt_in, web_vitals_allowed_metrics: null };
}

/**
 * The script form (`config.js`), which posthog-js loads with a `<script>` tag and then reads from
 * `window._POSTHOG_REMOTE_CONFIG[token]` (PostHog: RemoteConfig.get_config_js_via_token). `siteApps`
 * moves out of the config into the wrapper, as there. The token is a JSON string literal, and `<`
 * is escaped so no value can close a surrounding script element.
 */
export function remoteConfigScript(token: string, config: Record<string, unknown>): string {
  const { siteApps: _siteApps, ...rest } = config;
  const js = (value: unknown) =>
    JSON.stringify(value)
      .replace(/</g, '\\u003c')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029');
  return `(function() {
  window._POSTHOG_REMOTE_CONFIG = window._POSTHOG_REMOTE_CONFIG || {};
  window._POSTHOG_REMOTE_CONFIG[${js(token)}] = {
    config: ${js(rest)},
    siteApps: []
  }
})();
`;
}
