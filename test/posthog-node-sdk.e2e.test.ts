// posthog-node, unmodified, against the running service (`npm start`'s all-in-one app): capture,
// identify, alias, groupIdentify, remote flags and payloads, local evaluation from
// /flags/definitions with ETag re-polls, and the flush on shutdown. Every request goes through a
// recording relay (listed with its status); what was stored is read back by uuid.
import { PostHog } from 'posthog-node';
import {
  eventsOf,
  formatRequests,
  startRecordingProxy,
  startSdkTarget,
  waitFor,
  type RecordingProxy,
  type SdkTarget,
  type StoredEvent,
} from '@sightline/testkit';

const USER = 'node-user';
const ALIAS = 'node-alias';
const POLL_MS = 200;

const FLAGS = [
  { key: 'node-everyone', filters: { groups: [{ properties: [], rollout_percentage: 100 }], payloads: { true: '{"n":1}' } } },
  { key: 'node-plain', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
  {
    key: 'node-pro',
    filters: {
      groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }],
      payloads: { true: '"pro payload"' },
    },
  },
  {
    key: 'node-variants',
    filters: {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'only', rollout_percentage: 100 }] },
      payloads: { only: '{"variant":"only"}' },
    },
  },
];

describe('posthog-node against the service', () => {
  let target: SdkTarget;
  let proxy: RecordingProxy;
  let remote: PostHog;
  let local: PostHog;
  const flagIds = new Map<string, number>();

  beforeAll(async () => {
    target = await startSdkTarget('sdk_node');
    proxy = await startRecordingProxy(target.base);
    for (const flag of FLAGS) {
      const created = await target.api('POST', '/api/projects/1/feature_flags/', { ...flag, active: true });
      expect(created.status).toBe(201);
      flagIds.set(flag.key, created.body.id);
    }
    remote = new PostHog(target.projectKey, { host: proxy.base, flushAt: 50, flushInterval: 60_000 });
    local = new PostHog(target.projectKey, {
      host: proxy.base,
      personalApiKey: target.personalKey,
      featureFlagsPollingInterval: POLL_MS,
      flushAt: 50,
      flushInterval: 60_000,
    });
  }, 120_000);

  afterAll(async () => {
    process.stdout.write(`\n[posthog-node] requests:\n${formatRequests(proxy?.requests ?? [])}\n`);
    await proxy?.close();
    await target?.close();
  });

  it('evaluates flags remotely: values, payloads (none when a flag has none) and all flags at once', async () => {
    expect(await remote.getFeatureFlag('node-everyone', USER)).toBe(true);
    expect(await remote.getFeatureFlag('node-everyone', USER)).toBe(true);
    expect(await remote.getFeatureFlagPayload('node-everyone', USER)).toEqual({ n: 1 });
    expect(await remote.getFeatureFlag('node-plain', USER)).toBe(true);
    // On the wire the flag has no payload key (as PostHog answers); this SDK call then gives null
    // for an enabled flag, and getAllFlagsAndPayloads below has no entry for it.
    expect(await remote.getFeatureFlagPayload('node-plain', USER)).toBeNull();
    const wire = await fetch(`${target.base}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token: target.projectKey, distinct_id: USER }) });
    const { flags } = (await wire.json()) as { flags: Record<string, { metadata: Record<string, unknown> }> };
    expect(flags['node-plain']!.metadata).not.toHaveProperty('payload');
    expect(flags['node-everyone']!.metadata['payload']).toBe('{"n":1}');
    expect(await remote.getFeatureFlag('node-pro', USER, { personProperties: { plan: 'pro' } })).toBe(true);
    expect(await remote.getFeatureFlag('node-pro', 'someone-else', { personProperties: { plan: 'free' } })).toBe(false);
    expect(await remote.getFeatureFlag('node-variants', USER)).toBe('only');
    expect(await remote.getFeatureFlagPayload('node-variants', USER)).toEqual({ variant: 'only' });
    // The SDK's recommended form: one /flags request, a snapshot read locally and attached to an event.
    const snapshot = await remote.evaluateFlags('snapshot-user', { personProperties: { plan: 'pro' } });
    expect([snapshot.getFlag('node-pro'), snapshot.getFlag('node-variants'), snapshot.getFlagPayload('node-everyone')]).toEqual([true, 'only', { n: 1 }]);
    expect(snapshot.getFlagPayload('node-plain')).toBeUndefined();
    remote.capture({ distinctId: 'snapshot-user', event: 'node with flags', flags: snapshot });
    const all = await remote.getAllFlagsAndPayloads(USER, { personProperties: { plan: 'pro' } });
    expect(all.featureFlags).toEqual({ 'node-everyone': true, 'node-plain': true, 'node-pro': true, 'node-variants': 'only' });
    expect(all.featureFlagPayloads).toEqual({ 'node-everyone': { n: 1 }, 'node-pro': 'pro payload', 'node-variants': { variant: 'only' } });
  });

  it('evaluates flags locally from the definitions, and sees a change on a later poll (ETag, 304 while unchanged)', async () => {
    expect(await local.waitForLocalEvaluationReady(10_000)).toBe(true);
    const flagsCallsBefore = proxy.requests.filter((r) => r.path.startsWith('/flags/?')).length;
    const only = { onlyEvaluateLocally: true, personProperties: { plan: 'pro' } };
    expect(await local.getFeatureFlag('node-pro', 'local-user', only)).toBe(true);
    expect(await local.getFeatureFlagPayload('node-pro', 'local-user', undefined, only)).toBe('pro payload');
    expect(await local.getFeatureFlag('node-variants', 'local-user', only)).toBe('only');
    expect(await local.getFeatureFlag('node-pro', 'local-user', { onlyEvaluateLocally: true, personProperties: { plan: 'free' } })).toBe(false);
    // Nothing above needed the server.
    expect(proxy.requests.filter((r) => r.path.startsWith('/flags/?')).length).toBe(flagsCallsBefore);

    const polls = () => proxy.requests.filter((r) => r.path.startsWith('/flags/definitions'));
    await waitFor(() => polls().some((r) => r.status === 304), { timeoutMs: 10_000, description: 'an unchanged re-poll answered 304' });
    const changed = await target.api('PATCH', `/api/projects/1/feature_flags/${flagIds.get('node-pro')}/`, {
      filters: { groups: [{ properties: [{ key: 'plan', value: ['free'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] },
    });
    expect(changed.status).toBe(200);
    await waitFor(
      async () => (await local.getFeatureFlag('node-pro', 'local-user', { onlyEvaluateLocally: true, personProperties: { plan: 'free' } })) === true,
      {
        timeoutMs: 10_000,
        description: 'the changed definition after a re-poll',
      },
    );
    const statuses = polls().map((r) => r.status);
    expect(statuses[0]).toBe(200);
    expect(statuses.lastIndexOf(200)).toBeGreaterThan(statuses.indexOf(304));
    await local.shutdown();
  });

  let stored: StoredEvent[];
  let sent: Array<Record<string, any>>;

  it('captures, identifies, aliases and identifies groups, and flushes everything on shutdown', async () => {
    remote.capture({ distinctId: USER, event: 'node purchase', properties: { amount: 30 }, groups: { company: 'acme-node' } });
    remote.identify({ distinctId: USER, properties: { email: 'node@example.com', plan: 'pro', $set_once: { first_plan: 'pro' } } });
    remote.alias({ distinctId: USER, alias: ALIAS });
    remote.groupIdentify({ groupType: 'company', groupKey: 'acme-node', properties: { name: 'Acme Node' } });
    for (let i = 0; i < 5; i++) remote.capture({ distinctId: ALIAS, event: 'node burst', properties: { i } });
    // Nothing is sent before this: flushAt 50 and a one-minute interval. shutdown() flushes.
    await remote.shutdown();
    sent = proxy.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/batch')).flatMap((r) => eventsOf(r.body));
    expect(proxy.requests.filter((r) => r.path.startsWith('/batch')).every((r) => r.status === 200)).toBe(true);
    stored = await target.eventsOnceStored(sent.map((e) => e['uuid'] as string));
  });

  it('stored every event once, merged the alias and set the person and group properties', async () => {
    const byUuid = new Map(stored.map((e) => [e.uuid, e]));
    for (const event of sent) {
      expect({ uuid: event['uuid'], event: byUuid.get(event['uuid'])?.event, copies: byUuid.get(event['uuid'])?.copies }).toEqual({
        uuid: event['uuid'],
        event: event['event'],
        copies: 1,
      });
    }
    expect(stored.filter((e) => e.event === 'node burst')).toHaveLength(5);
    expect(stored.find((e) => e.event === 'node with flags')!.properties).toMatchObject({ '$feature/node-pro': true, '$feature/node-variants': 'only' });
    // One $feature_flag_called per user, flag and value: the SDK remembers what it reported.
    const called = stored
      .filter((e) => e.event === '$feature_flag_called')
      .map((e) => `${e.distinct_id}:${e.properties['$feature_flag']}=${String(e.properties['$feature_flag_response'])}`);
    expect(new Set(called).size).toBe(called.length);
    expect(called).toEqual(
      expect.arrayContaining([
        `${USER}:node-everyone=true`,
        `${USER}:node-plain=true`,
        `${USER}:node-pro=true`,
        'someone-else:node-pro=false',
        `${USER}:node-variants=only`,
      ]),
    );

    const person = await target.person(ALIAS);
    expect(person).not.toBeNull();
    expect([...person!.distinct_ids].sort()).toEqual([ALIAS, USER].sort());
    expect(person!.properties).toMatchObject({ email: 'node@example.com', plan: 'pro', first_plan: 'pro' });
    const burst = stored.filter((e) => e.event === 'node burst');
    expect(new Set(burst.map((e) => e.person_id))).toEqual(new Set([person!.uuid]));
    expect(stored.find((e) => e.event === 'node purchase')!.properties['$groups']).toEqual({ company: 'acme-node' });
    const groups = await target.stores.db.query<{ group_key: string; group_properties: Record<string, unknown> }>(
      'SELECT group_key, group_properties FROM groups WHERE team_id = 1',
    );
    expect(groups).toEqual([{ group_key: 'acme-node', group_properties: { name: 'Acme Node' } }]);
  });
});
