import type { FlagResult } from '@sightline/flags';
import { buildFlagsResponse, configFields, DEFAULT_SDK_SETTINGS } from './decide-response';

const result = (key: string, payload: unknown): FlagResult => ({
  key,
  enabled: payload !== null,
  variant: null,
  reason: { code: payload !== null ? 'condition_match' : 'no_condition_match', condition_index: payload !== null ? 0 : null, description: 'x' },
  payload,
  id: 1,
  version: 2,
  description: null,
});

describe('/flags v2 metadata', () => {
  const flags = (r: FlagResult) => (buildFlagsResponse([r], false, { shape: 'flags-v2', withConfig: false })['flags'] as Record<string, any>)[r.key];

  it('leaves payload out when the flag has none, as PostHog does (posthog-node then reports no payload)', () => {
    const metadata = flags(result('off', null)).metadata;
    expect(metadata).toEqual({ id: 1, version: 2, description: null });
    expect('payload' in metadata).toBe(false);
  });

  it('sends a payload as stored (a JSON string)', () => {
    expect(flags(result('on', '{"a":1}')).metadata).toEqual({ id: 1, version: 2, description: null, payload: '{"a":1}' });
  });
});

describe('decide config', () => {
  it('carries the project settings and the legacy decide-only fields', () => {
    const fields = configFields({ ...DEFAULT_SDK_SETTINGS, autocapture_opt_out: true });
    expect(fields).toMatchObject({ autocapture_opt_out: true, config: { enable_collect_everything: true }, isAuthenticated: false, sessionRecording: false });
    expect(fields).not.toHaveProperty('token');
  });
});
