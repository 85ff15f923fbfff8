// Deployment files checked against the code they configure, without running Docker:
// .env.example, docker-compose.yml, deploy/Dockerfile and deploy/nginx.conf against the
// config specs in libs/config/src/env-specs.ts and against each other. Reads repo files only.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { appEnvSpecs, parseConfig, requiredInDistributedMode, type EnvSpec } from '@sightline/config';

const root = join(__dirname, '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

type AppName = keyof typeof appEnvSpecs;
const appNames = Object.keys(appEnvSpecs) as AppName[];
type DistributedApp = keyof typeof requiredInDistributedMode;
const distributedApps = Object.keys(requiredInDistributedMode) as DistributedApp[];
const specOf = (app: AppName): EnvSpec => appEnvSpecs[app];

/** Variables docker-compose.yml substitutes that are not app config (documented in its header). */
const COMPOSE_ONLY_VARIABLES = ['POSTGRES_PASSWORD'];

const INGESTION_PATHS = ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage'];
const API_PATHS = [
  '/api',
  '/api/projects/',
  '/api/projects/1/insights/trend/',
  '/decide',
  '/decide/',
  '/flags',
  '/flags/',
  '/array/phc_x/config.js',
  '/static/array.js',
];

// ---- .env.example -------------------------------------------------------------------------

interface EnvExampleEntry {
  name: string;
  value: string;
  comment: string | undefined;
  line: number;
}

function readEnvExample(): { entries: EnvExampleEntry[]; malformed: string[] } {
  const lines = read('.env.example').split('\n');
  const entries: EnvExampleEntry[] = [];
  const malformed: string[] = [];
  lines.forEach((text, i) => {
    if (text.trim() === '' || text.startsWith('#')) return;
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(text);
    if (!match) {
      malformed.push(`line ${i + 1}: ${text}`);
      return;
    }
    const previous = lines[i - 1];
    entries.push({ name: match[1]!, value: match[2]!, comment: previous?.startsWith('#') ? previous : undefined, line: i + 1 });
  });
  return { entries, malformed };
}

const specKeyUnion = [...new Set(appNames.flatMap((app) => Object.keys(specOf(app))))].sort();
const appsWith = (name: string) => appNames.filter((app) => name in specOf(app));

/** The value .env.example shows: the common default, or empty when there is none or apps disagree. */
function expectedExampleValue(name: string): string {
  const defaults = new Set(appsWith(name).map((app) => String(specOf(app)[name]!.default ?? '')));
  return defaults.size === 1 ? [...defaults][0]! : '';
}

describe('.env.example', () => {
  const { entries, malformed } = readEnvExample();

  it('has only comments, blank lines and NAME=value lines', () => {
    expect(malformed).toEqual([]);
  });

  it('lists exactly the union of the app config specs, each once', () => {
    const names = entries.map((e) => e.name);
    const duplicated = names.filter((n, i) => names.indexOf(n) !== i);
    const missing = specKeyUnion.filter((n) => !names.includes(n));
    const unknown = names.filter((n) => !specKeyUnion.includes(n));
    // On failure: `missing` are spec keys to document, `unknown` are keys no spec has any more.
    expect({ missing, unknown, duplicated }).toEqual({ missing: [], unknown: [], duplicated: [] });
  });

  it('shows each default (empty where there is none or the apps differ)', () => {
    const wrong = entries
      .filter((e) => specKeyUnion.includes(e.name) && e.value !== expectedExampleValue(e.name))
      .map((e) => `${e.name}=${e.value} (expected ${e.name}=${expectedExampleValue(e.name)})`);
    expect(wrong).toEqual([]);
  });

  it('describes each variable and names the apps that read it', () => {
    const wrong: string[] = [];
    for (const e of entries.filter((x) => specKeyUnion.includes(x.name))) {
      const apps = /^# \S.* \(apps: ([a-z-]+(?:, [a-z-]+)*)\)$/.exec(e.comment ?? '')?.[1];
      const expected = appsWith(e.name).join(', ');
      if (apps !== expected) wrong.push(`${e.name} (line ${e.line}): expected "# <description> (apps: ${expected})" above it`);
    }
    expect(wrong).toEqual([]);
  });
});

// ---- docker-compose.yml -------------------------------------------------------------------

interface ComposeService {
  image?: string;
  build?: string | { context?: string; dockerfile?: string };
  command?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[] };
  volumes?: (string | { type?: string; source?: string })[];
  ports?: (string | number | { published?: string | number })[];
}
interface Compose {
  services?: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const composeText = read('docker-compose.yml');

function loadCompose(): { compose: Compose; errors: string[] } {
  // docker compose resolves YAML merge keys (<<), which YAML 1.2 leaves off by default.
  const doc = parseDocument(composeText, { merge: true });
  return { compose: (doc.toJS() ?? {}) as Compose, errors: [...doc.errors, ...doc.warnings].map((e) => e.message) };
}
const { compose, errors: composeErrors } = loadCompose();
const services = compose.services ?? {};

/** Compose interpolation with an empty environment: ${X:-default} and ${X-default} give default. */
const interpolate = (value: string) =>
  value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-?]([^}]*))?\}/g, (whole, _name, fallback?: string) => (whole === '$$' ? '$' : (fallback ?? '')));

function environmentOf(service: ComposeService): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    // `- NAME` without `=` passes the host's value through: not reliably set.
    return Object.fromEntries(env.map((item) => (item.includes('=') ? [item.slice(0, item.indexOf('=')), item.slice(item.indexOf('=') + 1)] : [item, ''])));
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? '' : String(v)]));
}

const commandOf = (service: ComposeService): string[] =>
  Array.isArray(service.command) ? service.command : (service.command ?? '').split(/\s+/).filter(Boolean);

function dependsOn(service: ComposeService): Record<string, string> {
  const deps = service.depends_on ?? [];
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((d) => [d, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([name, d]) => [name, d?.condition ?? 'service_started']));
}

/** Host names in connection values: postgres://u:p@host:5432/db, http://host:8123, host:9092,host2:9092. */
function hostsIn(value: string): string[] {
  return value.split(',').map((part) => {
    const withoutScheme = part.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
    const authority = withoutScheme.split('/')[0]!;
    return authority.slice(authority.lastIndexOf('@') + 1).split(':')[0]!;
  });
}

describe('docker-compose.yml', () => {
  it('parses as YAML', () => {
    expect(composeErrors).toEqual([]);
    expect(Object.keys(services).sort()).toEqual(expect.arrayContaining(['api', 'clickhouse', 'gateway', 'kafka', 'postgres', 'redis', 'worker']));
  });

  it('declares the named volumes it uses and bind-mounts files that exist', () => {
    const problems: string[] = [];
    for (const [name, service] of Object.entries(services)) {
      for (const volume of service.volumes ?? []) {
        const source = typeof volume === 'string' ? volume.split(':')[0]! : (volume.source ?? '');
        if (source.startsWith('.') || source.startsWith('/')) {
          if (!existsSync(join(root, source))) problems.push(`${name}: bind source ${source} does not exist`);
        } else if (!(source in (compose.volumes ?? {}))) {
          problems.push(`${name}: volume ${source} is not declared under top-level volumes`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('only substitutes app variables (.env.example) and its documented own variables', () => {
    const substituted = [...composeText.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
    const unknown = [...new Set(substituted)].filter((v) => !specKeyUnion.includes(v) && !COMPOSE_ONLY_VARIABLES.includes(v));
    expect(unknown).toEqual([]);
  });

  it('builds only the apps from deploy/Dockerfile', () => {
    const built = Object.entries(services).filter(([, s]) => s.build !== undefined);
    expect(built.map(([name]) => name).sort()).toEqual([...distributedApps].sort());
    for (const [, service] of built) {
      const build = typeof service.build === 'string' ? { context: service.build } : service.build!;
      expect(build.dockerfile).toBe('deploy/Dockerfile');
      expect(build.context ?? '.').toMatch(/^\.\/?$/);
    }
  });

  describe.each(distributedApps)('app service %s', (app) => {
    const service = services[app] ?? {};
    const env = environmentOf(service);

    it('runs its own main.ts through tsx', () => {
      expect(commandOf(service)).toEqual(['node', '--import', 'tsx', `apps/${app}/src/main.ts`]);
    });

    it("sets only variables of the app's spec", () => {
      const unknown = Object.keys(env).filter((name) => !(name in specOf(app)));
      expect(unknown).toEqual([]);
    });

    it('sets every variable the app requires in distributed mode', () => {
      const unset = requiredInDistributedMode[app].filter((name) => interpolate(env[name] ?? '').trim() === '');
      expect(unset).toEqual([]);
    });

    it("passes the app's own config validation (types, patterns, enums)", () => {
      const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(v)]));
      expect(() => parseConfig(specOf(app), resolved, requiredInDistributedMode[app])).not.toThrow();
    });

    it('waits for healthy services behind each connection it is given', () => {
      const deps = dependsOn(service);
      const problems: string[] = [];
      for (const name of ['DATABASE_URL', 'CLICKHOUSE_URL', 'KAFKA_BROKERS', 'REDIS_URL']) {
        if (!env[name]) continue;
        for (const host of hostsIn(interpolate(env[name]!))) {
          if (!(host in services)) problems.push(`${name}: ${host} is not a compose service`);
          else if (deps[host] !== 'service_healthy') problems.push(`${name}: depends_on ${host} should be condition: service_healthy`);
        }
      }
      expect(problems).toEqual([]);
    });

    it('has a healthcheck on GET /_ready at its PORT', () => {
      const test = service.healthcheck?.test;
      const text = Array.isArray(test) ? test.join(' ') : (test ?? '');
      expect(text).toContain('/_ready');
      // The check reads PORT from the container's environment, so it must be set explicitly.
      expect(text).toContain('process.env.PORT');
      expect(env['PORT']).toMatch(/^\d+$/);
    });
  });

  it('runs Kafka in KRaft mode with auto-created topics kept at least 7 days', () => {
    const env = environmentOf(services['kafka'] ?? {});
    expect(env['KAFKA_PROCESS_ROLES']?.split(',')).toEqual(expect.arrayContaining(['broker', 'controller']));
    expect(Object.keys(env).filter((k) => k.includes('ZOOKEEPER'))).toEqual([]);
    expect(env['KAFKA_AUTO_CREATE_TOPICS_ENABLE']).toBe('true');
    expect(Number(env['KAFKA_LOG_RETENTION_HOURS'])).toBeGreaterThanOrEqual(168);
  });

  it('starts Redis with noeviction and appendonly (BullMQ must never lose keys)', () => {
    const command = commandOf(services['redis'] ?? {});
    const option = (name: string) => command[command.indexOf(name) + 1];
    expect(command[0]).toBe('redis-server');
    expect(command).toContain('--maxmemory-policy');
    expect(option('--maxmemory-policy')).toBe('noeviction');
    expect(command).toContain('--appendonly');
    expect(option('--appendonly')).toBe('yes');
  });
});

// ---- Image pinning ------------------------------------------------------------------------

/**
 * Why an image reference is not pinned to one release, or null when it is: a digest, or a
 * tag starting with major.minor.patch. Exception: PostgreSQL has numbered its releases
 * MAJOR.MINOR since version 10, so `postgres:16.10` is one exact release.
 */
function pinProblem(reference: string): string | null {
  if (/[${}]/.test(reference)) return `${reference}: interpolated`;
  const [ref, digest] = reference.split('@');
  if (digest !== undefined) return /^sha256:[0-9a-f]{64}$/.test(digest) ? null : `${reference}: malformed digest`;
  const slash = ref!.lastIndexOf('/');
  const colon = ref!.lastIndexOf(':');
  if (colon <= slash) return `${reference}: no tag (means latest)`;
  const name = ref!.slice(0, colon);
  const tag = ref!.slice(colon + 1);
  if (tag === 'latest') return `${reference}: latest`;
  const twoPartVersions = /(^|\/)postgres$/.test(name);
  const exact = twoPartVersions ? /^\d+\.\d+(\.\d+)*(?![\d.])/ : /^v?\d+\.\d+\.\d+(\.\d+)*(?![\d.])/;
  return exact.test(tag) ? null : `${reference}: tag is not an exact version`;
}

function dockerfileBaseImages(text: string): string[] {
  const stages = new Set<string>();
  const images: string[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (!match) continue;
    if (!stages.has(match[1]!.toLowerCase())) images.push(match[1]!);
    if (match[2]) stages.add(match[2].toLowerCase());
  }
  return images;
}

describe('image pinning', () => {
  it.each([
    ['redis:7', false],
    ['redis:7.4', false],
    ['redis:7.4.5-alpine', true],
    ['redis', false],
    ['nginx:latest', false],
    ['node:20-bookworm-slim', false],
    ['node:20.20.2-bookworm-slim', true],
    ['clickhouse/clickhouse-server:25.8.29.51', true],
    ['postgres:16', false],
    ['postgres:16.10-bookworm', true],
    ['registry.local:5000/team/app:1.2.3', true],
    ['registry.local:5000/team/app', false],
    [`nginx@sha256:${'a'.repeat(64)}`, true],
    ['${IMAGE:-x:1.2.3}', false],
  ])('rule: %s pinned is %s', (reference, pinned) => {
    expect(pinProblem(reference) === null).toBe(pinned);
  });

  it('pins every image docker-compose.yml pulls', () => {
    const pulled = Object.entries(services).filter(([, s]) => s.build === undefined);
    expect(pulled.every(([, s]) => typeof s.image === 'string')).toBe(true);
    expect(pulled.map(([, s]) => pinProblem(s.image!)).filter(Boolean)).toEqual([]);
  });

  it('pins every base image of deploy/Dockerfile', () => {
    const images = dockerfileBaseImages(read('deploy/Dockerfile'));
    expect(images.length).toBeGreaterThan(0);
    expect(images.map(pinProblem).filter(Boolean)).toEqual([]);
  });
});

// ---- deploy/nginx.conf --------------------------------------------------------------------

interface Directive {
  name: string;
  args: string[];
  block?: Directive[];
}

/** Comments dropped, quoted strings kept as single tokens; then directives and blocks. */
function parseNginx(text: string): Directive[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      tokens.push(text.slice(i, j + 1));
      i = j + 1;
    } else if ('{};'.includes(c)) {
      tokens.push(c);
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      let j = i;
      while (j < text.length && !/[\s{};#"']/.test(text[j]!)) j++;
      tokens.push(text.slice(i, j));
      i = j;
    }
  }
  let at = 0;
  const parseBlock = (): Directive[] => {
    const directives: Directive[] = [];
    while (at < tokens.length && tokens[at] !== '}') {
      const words: string[] = [];
      while (at < tokens.length && !['{', ';', '}'].includes(tokens[at]!)) words.push(tokens[at++]!);
      const end = tokens[at++];
      const directive: Directive = { name: words[0] ?? '', args: words.slice(1) };
      if (end === '{') {
        directive.block = parseBlock();
        if (tokens[at++] !== '}') throw new Error(`nginx.conf: unclosed block ${words.join(' ')}`);
      } else if (end !== ';') {
        throw new Error(`nginx.conf: missing ';' after ${words.join(' ')}`);
      }
      directives.push(directive);
    }
    return directives;
  };
  const top = parseBlock();
  if (at < tokens.length) throw new Error('nginx.conf: unbalanced }');
  return top;
}

const children = (block: Directive[] | undefined, name: string) => (block ?? []).filter((d) => d.name === name);

interface Location {
  modifier: '=' | '^~' | '~' | '~*' | '';
  pattern: string;
  block: Directive[];
}

function locationsOf(server: Directive): Location[] {
  return children(server.block, 'location')
    .filter((d) => !d.args[0]!.startsWith('@'))
    .map((d) =>
      d.args.length === 2
        ? { modifier: d.args[0] as Location['modifier'], pattern: d.args[1]!, block: d.block ?? [] }
        : { modifier: '', pattern: d.args[0]!, block: d.block ?? [] },
    );
}

/**
 * nginx's location choice for a URI: an exact match wins; else the longest prefix, which
 * wins at once if it is `^~`; else the first matching regex in file order; else that
 * longest prefix. A prefix location ending in `/` that proxies answers a 301 to the URI
 * without the slash (and regexes are not tried), the redirect SDK POSTs must never get.
 */
function selectLocation(locations: Location[], uri: string): Location | 'redirect' | undefined {
  const exact = locations.find((l) => l.modifier === '=' && l.pattern === uri);
  if (exact) return exact;
  const prefixes = locations.filter((l) => l.modifier === '' || l.modifier === '^~');
  const autoRedirect = prefixes.some((l) => l.pattern === `${uri}/` && children(l.block, 'proxy_pass').length > 0);
  if (autoRedirect && !prefixes.some((l) => l.pattern === uri)) return 'redirect';
  const longest = prefixes.filter((l) => uri.startsWith(l.pattern)).sort((a, b) => b.pattern.length - a.pattern.length)[0];
  if (longest?.modifier === '^~') return longest;
  const regex = locations.find((l) => (l.modifier === '~' || l.modifier === '~*') && new RegExp(l.pattern, l.modifier === '~*' ? 'i' : '').test(uri));
  return regex ?? longest;
}

function bytes(size: string): number {
  const match = /^(\d+)([kKmMgG]?)$/.exec(size);
  if (!match) return NaN;
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(match[1]) * unit;
}

describe('deploy/nginx.conf', () => {
  const config = parseNginx(read('deploy/nginx.conf'));
  const http = children(config, 'http')[0]!;
  const upstreams = Object.fromEntries(children(http.block, 'upstream').map((u) => [u.args[0]!, children(u.block, 'server').map((s) => s.args[0]!)]));
  // The public server: the one the proxy service publishes (container port 80).
  const server = children(http.block, 'server').find((s) => children(s.block, 'listen').some((l) => /^(.*:)?80$/.test(l.args[0]!)))!;
  const locations = server ? locationsOf(server) : [];
  const port = (app: string) => environmentOf(services[app] ?? {})['PORT'];

  /** Where a location proxies to, as host:port (through its upstream block if it names one). */
  function targetsOf(location: Location): string[] {
    const pass = children(location.block, 'proxy_pass')[0]?.args[0];
    const name = /^https?:\/\/([^/]+)/.exec(pass ?? '')?.[1];
    if (!name) return [];
    return upstreams[name] ?? [name];
  }

  /** proxy_set_header is inherited only by a level that sets none itself. */
  function effectiveHeaders(location: Location): string[][] {
    for (const level of [location.block, server.block, http.block]) {
      const headers = children(level, 'proxy_set_header');
      if (headers.length > 0) return headers.map((h) => h.args);
    }
    return [];
  }

  function routeOf(uri: string): { uri: string; target: string } {
    const location = selectLocation(locations, uri);
    if (location === 'redirect') return { uri, target: '301 redirect' };
    if (!location) return { uri, target: 'no location' };
    return { uri, target: targetsOf(location).join(',') || 'not proxied' };
  }

  it('parses and has a public server on port 80 (the port docker-compose.yml publishes)', () => {
    expect(server).toBeDefined();
    const published = (services['proxy']?.ports ?? []).map(String);
    expect(published.some((p) => /:80$/.test(p))).toBe(true);
  });

  it.each(INGESTION_PATHS.flatMap((p) => [p, `${p}/`]))('routes %s to the gateway without a redirect', (uri) => {
    expect(routeOf(uri)).toEqual({ uri, target: `gateway:${port('gateway')}` });
  });

  it.each(API_PATHS)('routes %s to the api', (uri) => {
    expect(routeOf(uri)).toEqual({ uri, target: `api:${port('api')}` });
  });

  it('never answers ingestion routes with a redirect of its own', () => {
    const redirects = INGESTION_PATHS.flatMap((p) => [p, `${p}/`])
      .map((uri) => ({ uri, location: selectLocation(locations, uri) }))
      .filter(({ location }) => location !== undefined && location !== 'redirect')
      .filter(({ location }) =>
        (location as Location).block.some(
          (d) => (d.name === 'return' && /^30[1278]$/.test(d.args[0]!)) || (d.name === 'rewrite' && /^(redirect|permanent)$/.test(d.args[2] ?? '')),
        ),
      )
      .map(({ uri }) => uri);
    expect(redirects).toEqual([]);
  });

  it('accepts request bodies up to 25 MB', () => {
    const sizes = [server.block, http.block].flatMap((b) => children(b, 'client_max_body_size')).map((d) => d.args[0]!);
    expect(sizes.length).toBeGreaterThan(0);
    expect(bytes(sizes[0]!)).toBeGreaterThanOrEqual(25 * 1024 * 1024);
  });

  it('passes X-Forwarded-For on every proxied route', () => {
    const missing = [...INGESTION_PATHS, ...API_PATHS]
      .map((uri) => ({ uri, location: selectLocation(locations, uri) }))
      .filter(({ location }) => typeof location === 'object')
      .filter(
        ({ location }) =>
          !effectiveHeaders(location as Location).some(([name, value]) => name?.toLowerCase() === 'x-forwarded-for' && value === '$proxy_add_x_forwarded_for'),
      )
      .map(({ uri }) => uri);
    expect(missing).toEqual([]);
  });

  it('hands capture and flag requests (POSTs too) to the next process on a connection error or a 503, and no other management POST', () => {
    /** proxy_next_upstream, like proxy_set_header, is inherited only by a level that sets none itself. */
    const nextUpstream = (uri: string): string[] => {
      const location = selectLocation(locations, uri) as Location;
      for (const level of [location.block, server.block, http.block]) {
        const set = children(level, 'proxy_next_upstream');
        if (set.length > 0) return set[0]!.args;
      }
      return ['error', 'timeout']; // nginx's default
    };
    const retried = [...INGESTION_PATHS, '/decide/', '/flags/'].map((uri) => ({ uri, conditions: nextUpstream(uri) }));
    expect(retried).toEqual(retried.map(({ uri }) => ({ uri, conditions: expect.arrayContaining(['error', 'http_503', 'non_idempotent']) })));
    expect(nextUpstream('/api/projects/')).toEqual(expect.arrayContaining(['error', 'http_503']));
    expect(nextUpstream('/api/projects/')).not.toContain('non_idempotent');
  });
});
