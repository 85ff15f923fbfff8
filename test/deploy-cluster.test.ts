// deploy/cluster/ checked against the code it configures and against itself, without Docker
// (this machine has none): docker-compose.yml against the app config specs and .env.example,
// the ClickHouse remote_servers / macros / Keeper files against the services, and nginx.conf's
// upstreams against the app services. Reads repo files only.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { parseDocument } from 'yaml';
import { appEnvSpecs, parseConfig, requiredInDistributedMode, type EnvSpec } from '@sightline/config';

const root = join(__dirname, '..');
const dir = join(root, 'deploy', 'cluster');
const read = (file: string) => readFileSync(join(dir, file), 'utf8');

interface Service {
  image?: string;
  build?: { context?: string; dockerfile?: string };
  command?: string[];
  hostname?: string;
  environment?: Record<string, string | number | boolean | null>;
  depends_on?: Record<string, { condition?: string }>;
  healthcheck?: { test?: string[] };
  volumes?: string[];
  ports?: string[];
}

const composeText = read('docker-compose.yml');
const doc = parseDocument(composeText, { merge: true });
const compose = doc.toJS() as { services: Record<string, Service>; volumes: Record<string, unknown> };
const services = compose.services ?? {};
const names = Object.keys(services);
const named = (prefix: string) => names.filter((n) => new RegExp(`^${prefix}-`).test(n)).sort();

/** Compose interpolation with an empty environment: ${X:-default} gives default. */
const interpolate = (value: string) => value.replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}/g, (_whole, fallback?: string) => fallback ?? '');
const env = (name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(services[name]?.environment ?? {}).map(([k, v]) => [k, v === null ? '' : interpolate(String(v))]));
const hostOf = (url: string) => new URL(url).hostname;

const envExampleNames = readFileSync(join(root, '.env.example'), 'utf8')
  .split('\n')
  .map((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
  .filter((n): n is string => n !== undefined);
/** Compose-only variables, documented in the compose file's header. */
const COMPOSE_ONLY = ['POSTGRES_PASSWORD', 'CLICKHOUSE_INTERSERVER_SECRET'];

// Lists that may have one element: shards and their replicas, Keeper nodes, raft servers.
const LISTS = [/\.remote_servers\.\w+\.shard$/, /\.shard\.replica$/, /\.zookeeper\.node$/, /\.raft_configuration\.server$/];
const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (_name, jpath) => LISTS.some((list) => list.test(String(jpath))) });
const clusterXml = xml.parse(read('clickhouse/cluster.xml')).clickhouse;
const keeperXml = xml.parse(read('keeper/keeper_config.xml')).clickhouse.keeper_server;
const clusterNames = Object.keys(clusterXml.remote_servers);
const shards = (clusterXml.remote_servers[clusterNames[0]!].shard ?? []) as { internal_replication: boolean; replica: { host: string; port: number }[] }[];

const APP_ROLES = { gateway: 2, worker: 3, api: 2 } as const;
type App = keyof typeof APP_ROLES;
const appServices = (Object.keys(APP_ROLES) as App[]).flatMap((app) => named(app).map((name) => ({ app, name })));

describe('deploy/cluster/docker-compose.yml', () => {
  it('parses, with 2 gateways, 3 workers, 2 api processes, 3 Kafka brokers, 4 ClickHouse nodes, 3 Keeper nodes', () => {
    expect([...doc.errors, ...doc.warnings].map((e) => e.message)).toEqual([]);
    expect(Object.fromEntries((Object.keys(APP_ROLES) as App[]).map((app) => [app, named(app).length]))).toEqual(APP_ROLES);
    expect(named('kafka')).toEqual(['kafka-1', 'kafka-2', 'kafka-3']);
    expect(named('clickhouse')).toEqual(['clickhouse-s1-r1', 'clickhouse-s1-r2', 'clickhouse-s2-r1', 'clickhouse-s2-r2']);
    expect(named('keeper')).toEqual(['keeper-1', 'keeper-2', 'keeper-3']);
    expect(names).toEqual(expect.arrayContaining(['proxy', 'postgres', 'redis']));
  });

  it('declares its named volumes and bind-mounts files that exist', () => {
    const problems: string[] = [];
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('.')) {
          if (!existsSync(join(dir, source))) problems.push(`${name}: ${source} does not exist`);
        } else if (!(source in (compose.volumes ?? {}))) problems.push(`${name}: volume ${source} is not declared`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('substitutes only variables of .env.example and its documented own', () => {
    const substituted = [...new Set([...composeText.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))];
    expect(substituted.filter((v) => !envExampleNames.includes(v) && !COMPOSE_ONLY.includes(v))).toEqual([]);
    for (const variable of COMPOSE_ONLY) expect(composeText.split('\n').slice(0, 25).join('\n')).toContain(variable);
  });

  it('pins every image it pulls to one release', () => {
    const unpinned = Object.entries(services)
      .filter(([, s]) => s.build === undefined)
      .map(([name, s]) => [name, s.image ?? ''])
      .filter(([, image]) => !/:(\d+\.\d+\.\d+(\.\d+)*|16\.\d+)(-[a-z]+)?$/.test(image!));
    expect(unpinned).toEqual([]);
  });

  it('publishes only the proxy, on host ports used once', () => {
    const published = Object.entries(services).flatMap(([name, s]) => (s.ports ?? []).map((p) => ({ name, host: String(p).split(':')[0] })));
    expect(published.map((p) => p.name)).toEqual(['proxy']);
    expect(new Set(published.map((p) => p.host)).size).toBe(published.length);
  });

  describe.each(appServices)('$name', ({ app, name }) => {
    const service = services[name]!;
    const vars = env(name);

    it('is built from deploy/Dockerfile and runs its own main.ts through tsx', () => {
      expect(service.build).toEqual({ context: '../..', dockerfile: 'deploy/Dockerfile' });
      expect(service.command).toEqual(['node', '--import', 'tsx', `apps/${app}/src/main.ts`]);
    });

    it("sets only variables of its app's spec (all in .env.example), and passes the app's validation", () => {
      expect(Object.keys(vars).filter((k) => !(k in appEnvSpecs[app]) || !envExampleNames.includes(k))).toEqual([]);
      const spec: EnvSpec = appEnvSpecs[app];
      const required: readonly string[] = requiredInDistributedMode[app];
      expect(() => parseConfig(spec, vars, required)).not.toThrow();
    });

    it('waits for a healthy service behind every connection it is given', () => {
      const hosts = [
        ...(vars['KAFKA_BROKERS']?.split(',').map((b) => b.split(':')[0]!) ?? []),
        ...['DATABASE_URL', 'CLICKHOUSE_URL', 'REDIS_URL'].filter((k) => vars[k]).map((k) => hostOf(vars[k]!)),
      ];
      const deps = service.depends_on ?? {};
      expect(hosts.filter((h) => deps[h]?.condition !== 'service_healthy')).toEqual([]);
    });

    it('has a healthcheck on /_ready at its PORT', () => {
      expect((service.healthcheck?.test ?? []).join(' ')).toMatch(/process\.env\.PORT.*\/_ready/);
      expect(vars['PORT']).toMatch(/^\d+$/);
    });

    if (app !== 'gateway') {
      it('uses the ClickHouse cluster of remote_servers, through one of its nodes', () => {
        expect(vars['CLICKHOUSE_CLUSTER']).toBe(clusterNames[0]);
        expect(named('clickhouse')).toContain(hostOf(vars['CLICKHOUSE_URL']!));
      });
    }
    if (app !== 'api') {
      it('reaches every Kafka broker', () => {
        expect(vars['KAFKA_BROKERS']!.split(',').sort()).toEqual(named('kafka').map((k) => `${k}:9092`));
      });
    }
  });

  it('spreads the workers over different ClickHouse nodes', () => {
    const nodes = named('worker').map((w) => hostOf(env(w)['CLICKHOUSE_URL']!));
    expect(new Set(nodes).size).toBe(nodes.length);
  });

  it('runs Kafka as three KRaft brokers, each partition on all three and written to two', () => {
    const ids = named('kafka').map((k) => env(k)['KAFKA_NODE_ID']);
    expect(ids).toEqual(['1', '2', '3']);
    for (const [i, k] of named('kafka').entries()) {
      const vars = env(k);
      expect(vars['KAFKA_PROCESS_ROLES']).toBe('broker,controller');
      expect(vars['KAFKA_ADVERTISED_LISTENERS']).toBe(`PLAINTEXT://${k}:9092`);
      expect(vars['KAFKA_CONTROLLER_QUORUM_VOTERS']).toBe(
        named('kafka')
          .map((n, j) => `${j + 1}@${n}:9093`)
          .join(','),
      );
      expect(vars['KAFKA_DEFAULT_REPLICATION_FACTOR']).toBe('3');
      expect(vars['KAFKA_MIN_INSYNC_REPLICAS']).toBe('2');
      expect(vars['KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR']).toBe('3');
      expect(Number(vars['KAFKA_NUM_PARTITIONS'])).toBeGreaterThanOrEqual(named('worker').length);
      expect(Number(vars['KAFKA_LOG_RETENTION_HOURS'])).toBeGreaterThanOrEqual(168);
      expect(vars['CLUSTER_ID']).toBe(env('kafka-1')['CLUSTER_ID']);
      expect(i).toBeLessThan(3);
    }
  });
});

describe('deploy/cluster/clickhouse', () => {
  const macrosOf = (service: string) => {
    const mount = (services[service]!.volumes ?? []).filter((v) => v.includes('/macros/'));
    expect(mount).toHaveLength(1);
    return xml.parse(read(mount[0]!.split(':')[0]!)).clickhouse.macros as { shard: string | number; replica: string };
  };

  it('defines one cluster of 2 shards x 2 replicas writing one replica per shard (internal_replication)', () => {
    expect(clusterNames).toHaveLength(1);
    expect(shards.map((s) => s.replica.length)).toEqual([2, 2]);
    expect(shards.every((s) => s.internal_replication === true)).toBe(true);
  });

  it('lists every ClickHouse service once as a replica, on its native port', () => {
    const hosts = shards.flatMap((s) => s.replica.map((r) => `${r.host}:${r.port}`)).sort();
    expect(hosts).toEqual(named('clickhouse').map((n) => `${n}:9000`));
  });

  it.each(named('clickhouse'))('%s: mounts cluster.xml and its own macros, naming its shard and a replica unique to it', (service) => {
    expect(services[service]!.volumes).toContain('./clickhouse/cluster.xml:/etc/clickhouse-server/config.d/cluster.xml:ro');
    const macros = macrosOf(service);
    const shardIndex = shards.findIndex((s) => s.replica.some((r) => r.host === service));
    expect(Number(macros.shard)).toBe(shardIndex + 1);
    expect(macros.replica).toBe(service);
    // Replicas fetch parts from each other at the container's host name.
    expect(services[service]!.hostname).toBe(service);
  });

  it('gives the nodes the interserver secret remote_servers reads', () => {
    const secret = clusterXml.remote_servers[clusterNames[0]!].secret['@from_env'];
    for (const service of named('clickhouse')) expect(env(service)[secret]).toBeTruthy();
  });

  it('points every node at the three Keeper services, which form one raft group', () => {
    expect(clusterXml.zookeeper.node.map((n: { host: string; port: number }) => `${n.host}:${n.port}`)).toEqual(named('keeper').map((k) => `${k}:9181`));
    expect(keeperXml.tcp_port).toBe(9181);
    const raft = keeperXml.raft_configuration.server as { id: number; hostname: string }[];
    expect(raft.map((s) => s.hostname)).toEqual(named('keeper'));
    const idVariable = keeperXml.server_id['@from_env'];
    for (const keeper of named('keeper')) {
      const id = Number(env(keeper)[idVariable]);
      expect(raft.find((s) => s.id === id)?.hostname).toBe(services[keeper]!.hostname);
      expect(services[keeper]!.volumes).toContain('./keeper/keeper_config.xml:/etc/clickhouse-keeper/keeper_config.xml:ro');
    }
  });
});

describe('deploy/cluster/nginx.conf', () => {
  const nginx = read('nginx.conf');
  const upstream = (name: string) =>
    [...(new RegExp(`upstream ${name} \\{([^}]*)\\}`).exec(nginx)?.[1] ?? '').matchAll(/^\s*server (\S+?)( resolve)?;/gm)].map((m) => m[1]).sort();

  it('balances over every gateway and every api process, at their PORT', () => {
    expect(upstream('sightline_gateway')).toEqual(named('gateway').map((g) => `${g}:${env(g)['PORT']}`));
    expect(upstream('sightline_api')).toEqual(named('api').map((a) => `${a}:${env(a)['PORT']}`));
  });

  it('passes a capture or decide POST to the next process on a refused connection or a 503, never on a timeout', () => {
    const conditions = (block: string) => /proxy_next_upstream ([^;]+);/.exec(block)?.[1]?.split(/\s+/) ?? [];
    const posts = [...nginx.matchAll(/^\s*location ~ \^\/(?:\(capture[^{]*|i\/v0\/e[^{]*|\(decide[^{]*)\{[^}]*\}/gm)].map((m) => conditions(m[0]));
    expect(posts).toHaveLength(3);
    for (const directive of posts) {
      expect(directive).toEqual(expect.arrayContaining(['error', 'http_503', 'non_idempotent']));
      expect(directive).not.toContain('timeout');
    }
    // Elsewhere (the management API) a POST already sent is never sent again.
    const serverLevel = /^ {8}proxy_next_upstream ([^;]+);/m.exec(nginx)?.[1]?.split(/\s+/) ?? [];
    expect(serverLevel).toEqual(expect.arrayContaining(['error', 'http_503']));
    expect(serverLevel).not.toContain('non_idempotent');
  });

  it('routes like deploy/nginx.conf apart from the upstreams and the retry', () => {
    const single = readFileSync(join(root, 'deploy', 'nginx.conf'), 'utf8');
    const locations = (text: string) => [...text.matchAll(/^\s*location [^{]+\{[^}]*\}/gm)].map((m) => m[0].replace(/\s+/g, ' '));
    expect(locations(nginx)).toEqual(locations(single));
  });
});
