import { issueFirstStartPasswordToken, issuePasswordSetupToken } from '@sightline/accounts';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import request from 'supertest';
import { silentLogger } from '@sightline/logger';
import { createMetrics } from '@sightline/metrics';
import { testServices, uniqueName } from '@sightline/testkit';
import { createServiceApp } from '@sightline/http';
import { hashPassword, verifyPassword } from '@sightline/auth';
import { createApiApp } from '../app';
import { createFlagFixture, type FlagFixture } from '../testing/api-test-fixture';
import { createLoginRouter, SESSION_TTL_MS } from './login.route';
import { createSignInThrottle, SIGN_IN_COOLOFF_SECONDS } from './sign-in-throttle';

interface Cookies {
  session: string;
  csrf: string;
  /** The Cookie header a browser would send. */
  header: string;
  raw: string[];
}

function cookiesOf(res: request.Response): Cookies {
  const raw = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const value = (name: string) =>
    raw
      .find((c) => c.startsWith(`${name}=`))
      ?.split(';')[0]!
      .slice(name.length + 1) ?? '';
  const session = value('sightline_session');
  const csrf = value('sightline_csrftoken');
  return { session, csrf, header: `sightline_session=${session}; sightline_csrftoken=${csrf}`, raw };
}

describe('signing in to the web app', () => {
  let f: FlagFixture;
  let clock = Date.parse('2026-03-02T10:00:00Z');
  beforeAll(async () => {
    f = await createFlagFixture('web_login', () => clock);
  });
  afterAll(() => f.close());

  it('sets the first password through a one-time link, which then stops working', async () => {
    const token = await issueFirstStartPasswordToken(f.db, clock);
    expect(token).toEqual(expect.any(String));
    const res = await request(f.app).post('/api/password_setup/').send({ token, email: 'owner@example.com', password: 'correct horse battery' }).expect(200);
    const cookies = cookiesOf(res);
    const session = cookies.raw.find((c) => c.startsWith('sightline_session='))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).toMatch(/Path=\//);
    expect(cookies.raw.find((c) => c.startsWith('sightline_csrftoken='))).not.toMatch(/HttpOnly/i);
    const [user] = await f.db.query<{ email: string; password_hash: string }>('SELECT email, password_hash FROM users WHERE id = $1', [f.adminUserId]);
    expect(user!.email).toBe('owner@example.com');
    expect(user!.password_hash).toMatch(/^\$argon2id\$/);
    // Only hashes are stored.
    const stored = await f.db.query<{ token_hash: string }>('SELECT token_hash FROM user_sessions');
    expect(stored.map((s) => s.token_hash)).not.toContain(cookies.session);

    const again = await request(f.app).post('/api/password_setup/').send({ token, password: 'another password' }).expect(400);
    expect(again.body).toMatchObject({ type: 'validation_error', code: 'invalid_token', attr: 'token' });
    // Once a password exists, starts print no link.
    expect(await issueFirstStartPasswordToken(f.db, clock)).toBeNull();
  });

  it('refuses a short password and an unknown token with DRF errors', async () => {
    const token = await issuePasswordSetupToken(f.db, f.adminUserId, clock);
    const short = await request(f.app).post('/api/password_setup/').send({ token, password: 'short' }).expect(400);
    expect(short.body).toMatchObject({ code: 'min_length', attr: 'password' });
    await request(f.app).post('/api/password_setup/').send({ token: 'nope', password: 'long enough password' }).expect(400);
    const expired = await issuePasswordSetupToken(f.db, f.adminUserId, clock - 25 * 3600 * 1000);
    const late = await request(f.app).post('/api/password_setup/').send({ token: expired, password: 'long enough password' }).expect(400);
    expect(late.body.code).toBe('invalid_token');
  });

  it('signs in with the e-mail (any case) and password, and answers wrong ones alike', async () => {
    const wrong = await request(f.app).post('/api/login/').send({ email: 'owner@example.com', password: 'wrong password' }).expect(400);
    expect(wrong.body).toEqual({ type: 'validation_error', code: 'invalid_credentials', detail: 'Invalid email or password.', attr: null });
    const unknown = await request(f.app).post('/api/login/').send({ email: 'nobody@example.com', password: 'wrong password' }).expect(400);
    expect(unknown.body).toEqual(wrong.body);
    const missing = await request(f.app).post('/api/login/').send({ email: 'owner@example.com' }).expect(400);
    expect(missing.body).toMatchObject({ code: 'required', attr: 'password' });
    await request(f.app).post('/api/login/').send({ email: 'OWNER@example.com', password: 'correct horse battery' }).expect(200);
  });

  it('lets the session use the management API, with CSRF checks on writes', async () => {
    const login = await request(f.app).post('/api/login/').send({ email: 'owner@example.com', password: 'correct horse battery' }).expect(200);
    const cookies = cookiesOf(login);
    const me = await request(f.app).get('/api/users/@me/').set('Cookie', cookies.header).expect(200);
    expect(me.body).toMatchObject({ email: 'owner@example.com', team: { id: expect.any(Number), timezone: 'UTC' } });
    await request(f.app).get('/api/users/@me/').expect(401);
    const flagsPath = `/api/projects/${me.body.team.id}/feature_flags/`;
    await request(f.app).get(flagsPath).set('Cookie', cookies.header).expect(200);

    const flag = { key: 'web-session-flag', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } };
    const noToken = await request(f.app).post(flagsPath).set('Cookie', cookies.header).send(flag).expect(403);
    expect(noToken.body).toMatchObject({ code: 'permission_denied', detail: 'CSRF Failed: CSRF token missing.' });
    const badToken = await request(f.app).post(flagsPath).set('Cookie', cookies.header).set('X-CSRFToken', 'x'.repeat(43)).send(flag).expect(403);
    expect(badToken.body.detail).toBe('CSRF Failed: CSRF token incorrect.');
    const otherSite = await request(f.app)
      .post(flagsPath)
      .set('Cookie', cookies.header)
      .set('X-CSRFToken', cookies.csrf)
      .set('Origin', 'https://evil.example')
      .send(flag)
      .expect(403);
    expect(otherSite.body.detail).toMatch(/Origin checking failed/);
    const created = await request(f.app).post(flagsPath).set('Cookie', cookies.header).set('X-CSRFToken', cookies.csrf).send(flag).expect(201);
    // The activity log names the signed-in user.
    expect(created.body.created_by).toMatchObject({ email: 'owner@example.com' });

    // A request with an Authorization header is judged by it alone.
    await request(f.app).get(flagsPath).set('Cookie', cookies.header).set('Authorization', 'Bearer phx_wrong').expect(401);
  });

  it("takes a write's Origin only when its scheme, host and port are the app's own", async () => {
    const cookies = cookiesOf(await request(f.app).post('/api/login/').send({ email: 'owner@example.com', password: 'correct horse battery' }).expect(200));
    const me = await request(f.app).get('/api/users/@me/').set('Cookie', cookies.header).expect(200);
    const path = `/api/projects/${me.body.team.id}/feature_flags/`;
    let n = 0;
    const write = (app: Express, origin: string, headers: Record<string, string> = {}) =>
      request(app)
        .post(path)
        .set({ Host: 'sightline.example', ...headers, Cookie: cookies.header, 'X-CSRFToken': cookies.csrf, Origin: origin })
        .send({ key: `origin-check-${n++}`, filters: { groups: [{ properties: [], rollout_percentage: 10 }] } });
    // Served over plain HTTP: the same host over https, or on another port, is another origin.
    expect((await write(f.app, 'http://sightline.example')).status).toBe(201);
    expect((await write(f.app, 'http://sightline.example:80')).status).toBe(201);
    for (const origin of ['https://sightline.example', 'http://sightline.example:8080', 'http://evil.example', 'null']) {
      const refused = await write(f.app, origin);
      expect([origin, refused.status, refused.body.detail]).toEqual([origin, 403, expect.stringMatching(/Origin checking failed/)]);
    }
    // A client that is not a trusted proxy cannot claim https for itself.
    expect((await write(f.app, 'https://sightline.example', { 'X-Forwarded-Proto': 'https' })).status).toBe(403);

    // Behind a trusted TLS-terminating proxy (TRUSTED_PROXIES), the scheme and host it reports are the app's.
    const proxied = createApiApp({
      db: f.db,
      ch: f.ch,
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      trustProxy: 'loopback',
      now: () => clock,
    });
    const https = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'app.example' };
    expect((await write(proxied, 'https://app.example', https)).status).toBe(201);
    expect((await write(proxied, 'https://app.example:443', https)).status).toBe(201);
    expect((await write(proxied, 'http://app.example', https)).status).toBe(403);
    expect((await write(proxied, 'https://sightline.example', https)).status).toBe(403);
  });

  it('ends the session at logout and after two weeks', async () => {
    const login = await request(f.app).post('/api/login/').send({ email: 'owner@example.com', password: 'correct horse battery' }).expect(200);
    const cookies = cookiesOf(login);
    await request(f.app).post('/api/logout/').set('Cookie', cookies.header).expect(403);
    const out = await request(f.app).post('/api/logout/').set('Cookie', cookies.header).set('X-CSRFToken', cookies.csrf).expect(200);
    expect(([] as string[]).concat(out.headers['set-cookie'] ?? []).some((c) => /^sightline_session=;/.test(c))).toBe(true);
    const after = await request(f.app).get('/api/users/@me/').set('Cookie', cookies.header).expect(401);
    expect(after.body.code).toBe('authentication_failed');

    const second = cookiesOf(await request(f.app).post('/api/login/').send({ email: 'owner@example.com', password: 'correct horse battery' }).expect(200));
    clock += SESSION_TTL_MS + 1000;
    await request(f.app).get('/api/users/@me/').set('Cookie', second.header).expect(401);
  });

  it('ends every session of a user when the password changes', async () => {
    const cookies = cookiesOf(await request(f.app).post('/api/login/').send({ email: 'owner@example.com', password: 'correct horse battery' }).expect(200));
    const token = await issuePasswordSetupToken(f.db, f.adminUserId, clock);
    await request(f.app).post('/api/password_setup/').send({ token, password: 'a new long password' }).expect(200);
    await request(f.app).get('/api/users/@me/').set('Cookie', cookies.header).expect(401);
    await request(f.app).post('/api/login/').send({ email: 'owner@example.com', password: 'a new long password' }).expect(200);
  });
});

describe('the throttle on failed sign-ins (Redis, as in distributed mode)', () => {
  let f: FlagFixture;
  let redis: Redis;
  const prefix = uniqueName('sign_in');
  const email = 'guessed@example.com';
  beforeAll(async () => {
    redis = new Redis(testServices().redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    await new Promise((resolve) => redis.once('ready', resolve));
    f = await createFlagFixture('web_login_throttle', Date.now, 'pg', {
      access: { loginFailureLimit: 3, loginThrottleRedis: redis, rateLimitKeyPrefix: prefix },
    });
    const user = await f.addUser(email);
    const token = await issuePasswordSetupToken(f.db, user.id, Date.now());
    await request(f.app).post('/api/password_setup/').send({ token, password: 'the right password' }).expect(200);
  });
  afterAll(async () => {
    await f.close();
    await redis.quit();
  });

  it('answers 429 in DRF shape after the limit of failures for one e-mail from one address, in every api process', async () => {
    // Two api processes on the same database and Redis, behind a trusted proxy that names the client.
    const apiProcess = () =>
      createApiApp({
        db: f.db,
        ch: f.ch,
        logger: silentLogger(),
        metrics: createMetrics(),
        readiness: [],
        isShuttingDown: () => false,
        trustProxy: 'loopback',
        access: { loginFailureLimit: 3, loginThrottleRedis: redis, rateLimitKeyPrefix: prefix },
      });
    const [first, second] = [apiProcess(), apiProcess()];
    const attempt = (app: Express, password: string, ip = '127.0.0.1', who = email) =>
      request(app).post('/api/login/').set('X-Forwarded-For', ip).send({ email: who, password });
    // A success clears earlier failures.
    expect((await attempt(first, 'wrong 1')).status).toBe(400);
    expect((await attempt(first, 'the right password')).status).toBe(200);
    for (const [i, app] of [first, second, first].entries()) expect([i, (await attempt(app, `wrong ${i}`)).status]).toEqual([i, 400]);
    // The e-mail in another case is the same account.
    const refused = await attempt(second, 'the right password', '127.0.0.1', 'GUESSED@example.com');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      type: 'throttled_error',
      code: 'throttled',
      detail: expect.stringMatching(/^Request was throttled\. Expected available in \d+ seconds\.$/),
      attr: null,
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(500);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(SIGN_IN_COOLOFF_SECONDS);
    expect((await attempt(first, 'the right password')).status).toBe(429);
    // Another client address, and another e-mail from the locked-out address, are not refused.
    expect((await attempt(second, 'the right password', '10.1.2.3')).status).toBe(200);
    expect((await attempt(first, 'wrong', '127.0.0.1', 'someone-else@example.com')).status).toBe(400);
    // The counters are in Redis under the given prefix, with the cool-off as their lifetime.
    const keys = await redis.keys(`${prefix}:sign_in:*`);
    expect(keys.length).toBeGreaterThanOrEqual(1);
    expect(await redis.ttl(keys[0]!)).toBeGreaterThan(500);
  });
  // Two api processes on the same database and Redis, behind a trusted proxy that names the client.
  const apiProcess = (access: { loginFailureLimit: number; loginAddressFailureLimit: number }, keyPrefix: string) =>
    createApiApp({
      db: f.db,
      ch: f.ch,
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      trustProxy: 'loopback',
      access: { ...access, loginThrottleRedis: redis, rateLimitKeyPrefix: keyPrefix },
    });

  it('checks at most the limit of concurrent wrong passwords for one e-mail from one address', async () => {
    const keyPrefix = uniqueName('sign_in_burst');
    const [first, second] = [0, 1].map(() => apiProcess({ loginFailureLimit: 30, loginAddressFailureLimit: 1000 }, keyPrefix));
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        request(i % 2 ? first! : second!)
          .post('/api/login/')
          .set('X-Forwarded-For', '10.9.9.9')
          .send({ email, password: `wrong ${i}` })
          .then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 400)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
  });

  it('throttles one address trying a new e-mail each time, and its invalid setup links, but not other addresses', async () => {
    const app = apiProcess({ loginFailureLimit: 30, loginAddressFailureLimit: 5 }, uniqueName('sign_in_spray'));
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (
          await request(app)
            .post('/api/login/')
            .set('X-Forwarded-For', '10.7.7.7')
            .send({ email: `spray${i}@example.com`, password: 'p4ssword' })
        ).status,
      );
    const setup = () =>
      request(app).post('/api/password_setup/').set('X-Forwarded-For', '10.7.7.7').send({ token: 'guessed-token', password: 'long enough password' });
    statuses.push((await setup()).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400]);
    const refused = await request(app).post('/api/login/').set('X-Forwarded-For', '10.7.7.7').send({ email: 'spray9@example.com', password: 'p4ssword' });
    expect([refused.status, refused.body.code]).toEqual([429, 'throttled']);
    expect((await setup()).status).toBe(429);
    expect((await request(app).post('/api/login/').set('X-Forwarded-For', '10.7.7.8').send({ email: 'spray9@example.com', password: 'p4ssword' })).status).toBe(
      400,
    );
  });
});

describe('POST /api/password_setup/', () => {
  let f: FlagFixture;
  let hashes = 0;
  let app: Express;
  beforeAll(async () => {
    f = await createFlagFixture('web_password_setup', Date.now);
    // The route as the api mounts it, with argon2 counted.
    const passwords = {
      hash: (password: string) => {
        hashes++;
        return hashPassword(password);
      },
      verify: verifyPassword,
    };
    const signInThrottle = createSignInThrottle({ failureLimit: 30, addressFailureLimit: 1000 });
    app = createServiceApp({
      name: 'api',
      logger: silentLogger(),
      metrics: createMetrics(),
      readiness: [],
      isShuttingDown: () => false,
      routers: [createLoginRouter({ db: f.db, now: Date.now, passwords, signInThrottle })],
    });
  });
  afterAll(() => f.close());

  it('does no argon2 work for a link that is unknown, used or expired', async () => {
    const before = hashes;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(app)
          .post('/api/password_setup/')
          .send({ token: `not-a-link-${i}`, password: 'long enough password' }),
      ),
    );
    expect(answers.map((a) => [a.status, a.body.code])).toEqual(answers.map(() => [400, 'invalid_token']));
    const expired = await issuePasswordSetupToken(f.db, f.adminUserId, Date.now() - 25 * 3600 * 1000);
    expect((await request(app).post('/api/password_setup/').send({ token: expired, password: 'long enough password' })).body.code).toBe('invalid_token');
    expect(hashes).toBe(before);
    const token = await issuePasswordSetupToken(f.db, f.adminUserId, Date.now());
    await request(app).post('/api/password_setup/').send({ token, password: 'long enough password' }).expect(200);
    expect(hashes).toBe(before + 1);
    await request(app).post('/api/password_setup/').send({ token, password: 'long enough password' }).expect(400);
    expect(hashes).toBe(before + 1);
  });

  it('spends the link that finds an e-mail taken, so one link cannot probe for addresses', async () => {
    await f.addUser('taken@example.com');
    const newcomer = await f.addUser('newcomer@example.com');
    const token = await issuePasswordSetupToken(f.db, newcomer.id, Date.now());
    const taken = await request(app).post('/api/password_setup/').send({ token, email: 'TAKEN@example.com', password: 'long enough password' });
    expect([taken.status, taken.body.code, taken.body.attr]).toEqual([400, 'unique', 'email']);
    const again = await request(app).post('/api/password_setup/').send({ token, email: 'free@example.com', password: 'long enough password' });
    expect([again.status, again.body.code]).toEqual([400, 'invalid_token']);
    const [user] = await f.db.query<{ email: string; password_hash: string | null }>('SELECT email, password_hash FROM users WHERE id = $1', [newcomer.id]);
    expect(user).toEqual({ email: 'newcomer@example.com', password_hash: null });
  });
});
