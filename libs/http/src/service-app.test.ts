import { Router } from 'express';
import request from 'supertest';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { createServiceApp, trustProxySetting } from './service-app';

function appWith(trustProxy?: string) {
  const router = Router().get('/ip', (req, res) => void res.json({ ip: req.ip }));
  return createServiceApp({
    name: 't',
    logger: silentLogger(),
    metrics: createMetrics(),
    readiness: [],
    isShuttingDown: () => false,
    routers: [router],
    trustProxy,
  });
}

describe('trusted proxies', () => {
  it('reads the setting as Express does', () => {
    expect(trustProxySetting(undefined)).toBe(false);
    expect(trustProxySetting(' ')).toBe(false);
    expect(trustProxySetting('2')).toBe(2);
    expect(trustProxySetting('loopback, 10.0.0.0/8')).toEqual(['loopback', '10.0.0.0/8']);
  });

  it('ignores X-Forwarded-For unless the peer is a configured proxy', async () => {
    const spoofed = await request(appWith()).get('/ip').set('X-Forwarded-For', '203.0.113.9');
    expect(spoofed.body.ip).toMatch(/127\.0\.0\.1|::1/);
    const trusted = await request(appWith('loopback')).get('/ip').set('X-Forwarded-For', '203.0.113.9');
    expect(trusted.body.ip).toBe('203.0.113.9');
    const elsewhere = await request(appWith('10.0.0.0/8')).get('/ip').set('X-Forwarded-For', '203.0.113.9');
    expect(elsewhere.body.ip).not.toBe('203.0.113.9');
  });
});
