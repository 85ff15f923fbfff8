import vm from 'node:vm';
import { DEFAULT_SDK_SETTINGS } from '../decide';
import { buildRemoteConfig, remoteConfigScript } from './remote-config';

describe('remote config (what posthog-js reads at init)', () => {
  it('turns off what Sightline has no endpoint for and names the capture endpoint', () => {
    const config = buildRemoteConfig('phc_x', DEFAULT_SDK_SETTINGS, false);
    expect(config).toMatchObject({
      token: 'phc_x',
      supportedCompression: ['gzip', 'gzip-js'],
      hasFeatureFlags: false,
      autocapture_opt_out: false,
      analytics: { endpoint: '/i/v0/e/' },
      elementsChainAsString: true,
      sessionRecording: false,
      surveys: false,
      heatmaps: false,
      capturePerformance: false,
      autocaptureExceptions: false,
      captureDeadClicks: false,
      defaultIdentifiedOnly: true,
      siteApps: [],
    });
  });

  it('follows the project settings', () => {
    const config = buildRemoteConfig(
      'phc_x',
      { ...DEFAULT_SDK_SETTINGS, autocapture_opt_out: true, autocapture_web_vitals_opt_in: true, heatmaps_opt_in: true, autocapture_exceptions_opt_in: true },
      true,
    );
    expect(config).toMatchObject({
      hasFeatureFlags: true,
      autocapture_opt_out: true,
      heatmaps: true,
      autocaptureExceptions: true,
      errorTracking: { autocaptureExceptions: true, suppressionRules: [] },
      capturePerformance: { network_timing: false, web_vitals: true, web_vitals_allowed_metrics: null },
    });
  });

  it('the script sets window._POSTHOG_REMOTE_CONFIG[token] as PostHog does, whatever the token holds', () => {
    const token = `phc_'];alert(1);//</script>`;
    const config = buildRemoteConfig(token, DEFAULT_SDK_SETTINGS, true);
    const script = remoteConfigScript(token, config);
    expect(script).not.toContain('</script>');
    const window: { _POSTHOG_REMOTE_CONFIG?: Record<string, { config: Record<string, unknown>; siteApps: unknown[] }> } = {};
    vm.runInNewContext(script, { window });
    const { siteApps: _siteApps, ...withoutSiteApps } = config;
    expect(window._POSTHOG_REMOTE_CONFIG?.[token]).toEqual({ config: withoutSiteApps, siteApps: [] });
  });
});
