/**
 * The local cluster's nginx configuration, made from deploy/nginx.conf (the one docker-compose
 * mounts) so that both route the same paths the same way: only what differs on one machine is
 * replaced (listen address, upstream servers, log, pid and temp paths, no Docker DNS). Each
 * replaced line must appear exactly once; when deploy/nginx.conf changes shape this throws
 * rather than produce a configuration that routes differently.
 */
import fs from 'node:fs';
import path from 'node:path';

export const DEPLOY_NGINX_CONF = path.resolve(__dirname, '..', '..', '..', 'deploy', 'nginx.conf');

export interface LocalNginxSettings {
  /** The front address: 127.0.0.1:<port>. */
  listenPort: number;
  /** nginx's own health server (deploy/nginx.conf's container healthcheck), on loopback. */
  healthPort: number;
  /** Ports of the gateways and api processes behind the front (on 127.0.0.1). */
  gatewayPorts: readonly number[];
  apiPorts: readonly number[];
  /** Holds nginx's pid file, temp files and access log. */
  dir: string;
}

/** An upstream with no process left answers 503 JSON (deploy/nginx.conf's error page), as a down server does. */
const upstreamServers = (ports: readonly number[]) =>
  ports.length === 0 ? 'server 127.0.0.1:1 down;' : ports.map((port) => `server 127.0.0.1:${port};`).join('\n        ');

function replaceOnce(text: string, find: RegExp, replacement: string): string {
  const matches = text.match(new RegExp(find.source, find.flags.includes('g') ? find.flags : `${find.flags}g`));
  if (matches?.length !== 1) {
    throw new Error(`deploy/nginx.conf: expected ${find} exactly once, found it ${matches?.length ?? 0} times (update tools/cluster/src/nginx-config.ts)`);
  }
  return text.replace(find, () => replacement);
}

export function renderLocalNginxConfig(template: string, settings: LocalNginxSettings): string {
  const { dir } = settings;
  const temp = (name: string) => path.join(dir, 'temp', name);
  const steps: [RegExp, string][] = [
    // One worker: the machine runs every other process of the cluster too. In the foreground,
    // as a child of the cluster command, logging errors to stderr (the cluster's log file).
    [/^worker_processes auto;$/m, `worker_processes 1;\ndaemon off;\npid ${path.join(dir, 'nginx.pid')};\nerror_log stderr warn;`],
    // The usual open-file limit (1024) bounds connections anyway; more only earns a warning.
    [/^(\s*)worker_connections \d+;$/m, '$1worker_connections 512;'],
    [/^(\s*)access_log \/var\/log\/nginx\/access\.log;$/m, `$1access_log ${path.join(dir, 'access.log')};`],
    [/^(\s*)error_log\s+\/var\/log\/nginx\/error\.log warn;$/m, '$1error_log stderr warn;'],
    // No Docker DNS: the upstreams are loopback ports. The temp paths move out of /var/lib/nginx.
    [/^(\s*)resolver [^;]*;$/m, ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `$1${kind}_temp_path ${temp(kind)};`).join('\n')],
    [/^(\s*)server gateway:\d+ resolve;$/m, `$1${upstreamServers(settings.gatewayPorts)}`],
    [/^(\s*)server api:\d+ resolve;$/m, `$1${upstreamServers(settings.apiPorts)}`],
    [/^(\s*)listen 80 default_server;$/m, `$1listen 127.0.0.1:${settings.listenPort} default_server;`],
    [/^(\s*)listen 127\.0\.0\.1:8081;$/m, `$1listen 127.0.0.1:${settings.healthPort};`],
  ];
  // `$1` in the replacements is the line's indentation.
  return steps.reduce((text, [find, replacement]) => {
    const match = text.match(find);
    return replaceOnce(text, find, match ? replacement.replaceAll('$1', match[1] ?? '') : replacement);
  }, template);
}

/** Writes the configuration for `settings` (and the temp dirs nginx needs) into `settings.dir`. */
export function writeLocalNginxConfig(settings: LocalNginxSettings): string {
  fs.mkdirSync(path.join(settings.dir, 'temp'), { recursive: true });
  const file = path.join(settings.dir, 'nginx.conf');
  fs.writeFileSync(file, renderLocalNginxConfig(fs.readFileSync(DEPLOY_NGINX_CONF, 'utf8'), settings));
  return file;
}
