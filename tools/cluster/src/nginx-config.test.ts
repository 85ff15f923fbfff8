import fs from 'node:fs';
import { DEPLOY_NGINX_CONF, renderLocalNginxConfig } from './nginx-config';

const template = fs.readFileSync(DEPLOY_NGINX_CONF, 'utf8');
const settings = { listenPort: 18000, healthPort: 18081, gatewayPorts: [20001, 20002], apiPorts: [21001], dir: '/tmp/cluster/nginx' };

describe("the local cluster's nginx configuration (from deploy/nginx.conf)", () => {
  const config = renderLocalNginxConfig(template, settings);

  it('listens on loopback and sends each upstream to the processes behind it', () => {
    expect(config).toContain('listen 127.0.0.1:18000 default_server;');
    expect(config).toContain('listen 127.0.0.1:18081;');
    expect(config).toMatch(/upstream sightline_gateway \{[^}]*server 127\.0\.0\.1:20001;\s*server 127\.0\.0\.1:20002;[^}]*\}/);
    expect(config).toMatch(/upstream sightline_api \{[^}]*server 127\.0\.0\.1:21001;[^}]*\}/);
  });

  it('keeps nginx in the foreground with its files in the cluster directory and no Docker DNS', () => {
    expect(config).toMatch(/^daemon off;$/m);
    expect(config).toContain('pid /tmp/cluster/nginx/nginx.pid;');
    expect(config).toContain('access_log /tmp/cluster/nginx/access.log;');
    expect(config).toContain('client_body_temp_path /tmp/cluster/nginx/temp/client_body;');
    expect(config).not.toMatch(/resolver|resolve;|\/var\/log\/nginx/);
  });

  it('routes exactly as deploy/nginx.conf does: every location and proxy setting is kept', () => {
    const routing = (text: string) => text.split('\n').filter((line) => /^\s*(location|proxy_(?!temp_path)|error_page|client_max_body_size|return)/.test(line));
    expect(routing(config)).toEqual(routing(template));
  });

  it('marks an upstream with no process down (nginx then answers its 503 JSON)', () => {
    expect(renderLocalNginxConfig(template, { ...settings, apiPorts: [] })).toMatch(/upstream sightline_api \{[^}]*server 127\.0\.0\.1:1 down;[^}]*\}/);
  });

  it('refuses a template whose shape changed rather than route differently', () => {
    expect(() => renderLocalNginxConfig(template.replace('server gateway:8001 resolve;', 'server gateway:8001;'), settings)).toThrow(
      /expected .*server gateway.* exactly once, found it 0 times/,
    );
  });
});
