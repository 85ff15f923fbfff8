import express from 'express';
import request from 'supertest';
import { errorHandler } from '@sightline/http';
import { generatePersonalApiKey, generateProjectApiKey, hashPersonalApiKey, maskPersonalApiKey } from './keys';
import { personalKeyAuth, requireScope, type Principal } from './personal-key-auth';
import { hasScope } from './scopes';

describe('keys', () => {
  it('generates PostHog-shaped keys', () => {
    expect(generateProjectApiKey()).toMatch(/^phc_[A-Za-z0-9]{43}$/);
    expect(generatePersonalApiKey()).toMatch(/^phx_[A-Za-z0-9]{47}$/);
    expect(generatePersonalApiKey()).not.toBe(generatePersonalApiKey());
  });
  it('hashes deterministically and masks for display', () => {
    expect(hashPersonalApiKey('phx_abc')).toBe(hashPersonalApiKey('phx_abc'));
    expect(hashPersonalApiKey('phx_abc')).toMatch(/^sha256\$[0-9a-f]{64}$/);
    expect(maskPersonalApiKey('phx_abcdefghij')).toBe('phx_ab...ghij');
  });
});

describe('hasScope', () => {
  it('grants *, exact scopes, and read through write', () => {
    expect(hasScope(['*'], 'insight:read')).toBe(true);
    expect(hasScope(['insight:read'], 'insight:read')).toBe(true);
    expect(hasScope(['insight:write'], 'insight:read')).toBe(true);
    expect(hasScope(['insight:read'], 'insight:write')).toBe(false);
    expect(hasScope(['person:read'], 'insight:read')).toBe(false);
  });
});

describe('personalKeyAuth + requireScope', () => {
  const principal: Principal = { userId: 1, keyId: 1, scopes: ['insight:read'], scopedTeams: null, organizationId: 'o' };
  const good = 'phx_good';
  const app = express();
  app.use(personalKeyAuth(async (hash) => (hash === hashPersonalApiKey(good) ? principal : null)));
  app.get('/read', requireScope('insight:read'), (_req, res) => res.json({ ok: true }));
  app.get('/write', requireScope('feature_flag:write'), (_req, res) => res.json({ ok: true }));
  app.use(errorHandler());

  it('answers 401 not_authenticated without credentials', async () => {
    const res = await request(app).get('/read');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ type: 'authentication_error', code: 'not_authenticated', detail: 'Authentication credentials were not provided.', attr: null });
  });
  it('answers 401 authentication_failed for an unknown key', async () => {
    const res = await request(app).get('/read').set('Authorization', 'Bearer phx_nope');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('authentication_failed');
  });
  it('answers 403 naming the missing scope', async () => {
    const res = await request(app).get('/write').set('Authorization', `Bearer ${good}`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      type: 'authentication_error',
      code: 'permission_denied',
      detail: "API key missing required scope 'feature_flag:write'",
      attr: null,
    });
  });
  it('lets a key with the scope through', async () => {
    const res = await request(app).get('/read').set('Authorization', `Bearer ${good}`);
    expect(res.status).toBe(200);
  });
});
