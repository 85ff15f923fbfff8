import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { consumePasswordSetupToken, findPrincipalByKeyHash, findProjectByToken, findUserByEmail, PRINCIPAL_CHANGES_CHANNEL } from '@sightline/accounts';
import { hashPersonalApiKey, hashSecretToken } from '@sightline/auth';
import { createRedisInvalidation } from '@sightline/bus';
import { createMetadataStore, migratePostgres, type MetadataStore } from '@sightline/postgres';
import { createTestPostgresDatabase, testServices, waitFor, type TestPostgresDatabase } from '@sightline/testkit';
import { UsageError } from '../import';
import { runAdminCommand } from './admin-command';

const run = promisify(execFile);
const REPO = resolve(__dirname, '../../../..');

describe('admin command on the distributed PostgreSQL', () => {
  let database: TestPostgresDatabase;
  let db: MetadataStore;
  const printed: string[] = [];
  const admin = (...argv: string[]) => runAdminCommand(argv, db, (text) => printed.push(text));

  beforeAll(async () => {
    database = await createTestPostgresDatabase('admincli');
    db = await createMetadataStore({ url: database.url });
    await migratePostgres(db);
  });
  afterAll(async () => {
    await db.close();
    await database.drop();
  });

  it('creates a scoped key that authenticates, lists it masked, and revokes it', async () => {
    expect(await admin('keys', 'create', '--label', 'dashboard script', '--scopes', 'insight:read,person:read', '--project', '1')).toBe(0);
    const value = /shown once\): (phx_\S+)/.exec(printed.join('\n'))![1]!;
    const principal = await findPrincipalByKeyHash(db, hashPersonalApiKey(value));
    expect(principal).toMatchObject({ scopes: ['insight:read', 'person:read'], scopedTeams: [1] });

    printed.length = 0;
    expect(await admin('keys', 'list')).toBe(0);
    expect(printed.join('\n')).toContain(`${value.slice(0, 6)}...${value.slice(-4)}`);
    expect(printed.join('\n')).not.toContain(value);

    expect(await admin('keys', 'revoke', String(principal!.keyId))).toBe(0);
    expect(await findPrincipalByKeyHash(db, hashPersonalApiKey(value))).toBeNull();
    expect(await admin('keys', 'revoke', String(principal!.keyId))).toBe(1);
  });

  it('revokes a key even when Redis cannot be reached, and says servers refuse it within the cache bound', async () => {
    printed.length = 0;
    expect(await admin('keys', 'create', '--label', 'redis down', '--scopes', 'project:read')).toBe(0);
    const value = /shown once\): (phx_\S+)/.exec(printed.join('\n'))![1]!;
    const keyId = (await findPrincipalByKeyHash(db, hashPersonalApiKey(value)))!.keyId;
    // Nothing listens on port 1: the connection is refused.
    const unreachable = createRedisInvalidation('redis://127.0.0.1:1', { channel: PRINCIPAL_CHANGES_CHANNEL });
    try {
      printed.length = 0;
      expect(await runAdminCommand(['keys', 'revoke', String(keyId)], db, (text) => printed.push(text), { principalChanges: unreachable })).toBe(0);
    } finally {
      await unreachable.close();
    }
    expect(await findPrincipalByKeyHash(db, hashPersonalApiKey(value))).toBeNull();
    expect(printed.join('\n')).toMatch(new RegExp(`^key ${keyId} revoked; could not tell running servers through Redis \\(.+\\): they refuse it within 3 s$`));
  });

  it("npm run admin with DATABASE_URL and REDIS_URL announces the revoked key's owner on the api's channel", async () => {
    printed.length = 0;
    expect(await admin('keys', 'create', '--label', 'announced', '--scopes', 'project:read')).toBe(0);
    const value = /shown once\): (phx_\S+)/.exec(printed.join('\n'))![1]!;
    const principal = (await findPrincipalByKeyHash(db, hashPersonalApiKey(value)))!;
    // What the api's principal caches hear: a user id (other test files may announce theirs too).
    const heard: Array<number | null> = [];
    const api = createRedisInvalidation(testServices().redisUrl, { channel: PRINCIPAL_CHANGES_CHANNEL });
    try {
      await api.subscribe((userId) => heard.push(userId));
      const env = { ...process.env, DATABASE_URL: database.url, REDIS_URL: testServices().redisUrl };
      const revoked = await run('npm', ['run', '-s', 'admin', '--', 'keys', 'revoke', String(principal.keyId)], { cwd: REPO, env });
      expect(revoked.stdout.trim()).toBe(`key ${principal.keyId} revoked; running servers told to refuse it at once`);
      await waitFor(async () => heard.includes(principal.userId), { timeoutMs: 10_000, intervalMs: 20, description: 'the announcement heard' });
    } finally {
      await api.close();
    }
    expect(await findPrincipalByKeyHash(db, hashPersonalApiKey(value))).toBeNull();
  });

  it('gives up on an announcement that does not answer, and still revokes', async () => {
    printed.length = 0;
    expect(await admin('keys', 'create', '--label', 'redis silent', '--scopes', 'project:read')).toBe(0);
    const value = /shown once\): (phx_\S+)/.exec(printed.join('\n'))![1]!;
    const keyId = (await findPrincipalByKeyHash(db, hashPersonalApiKey(value)))!.keyId;
    // A publish that never settles (a Redis that accepts the connection and never answers).
    const silent = { publish: () => new Promise<void>(() => undefined) };
    printed.length = 0;
    expect(
      await runAdminCommand(['keys', 'revoke', String(keyId)], db, (text) => printed.push(text), { principalChanges: silent, announceTimeoutMs: 200 }),
    ).toBe(0);
    expect(await findPrincipalByKeyHash(db, hashPersonalApiKey(value))).toBeNull();
    expect(printed).toEqual([`key ${keyId} revoked; could not tell running servers through Redis (no answer within 200 ms): they refuse it within 3 s`]);
  });

  it('creates a project whose project key resolves', async () => {
    printed.length = 0;
    expect(await admin('projects', 'create', '--name', 'Shop', '--timezone', 'Europe/Paris')).toBe(0);
    const token = /project API key (phc_\S+)/.exec(printed.join('\n'))![1]!;
    expect(await findProjectByToken(db, token)).toMatchObject({ name: 'Shop', timezone: 'Europe/Paris' });
  });

  it('creates a web app user whose one-time link sets a password, and issues a new link to reset it', async () => {
    printed.length = 0;
    expect(await admin('users', 'create', '--email', 'analyst@example.com', '--name', 'Ana', '--url', 'https://sightline.example/')).toBe(0);
    const link = /(https:\/\/sightline\.example\/setup\?token=(\S+))/.exec(printed.join('\n'));
    expect(link).not.toBeNull();
    const user = await findUserByEmail(db, 'analyst@example.com');
    expect(user).toMatchObject({ firstName: 'Ana', passwordHash: null });
    expect(await consumePasswordSetupToken(db, hashSecretToken(decodeURIComponent(link![2]!)), new Date())).toBe(user!.id);
    await expect(admin('users', 'create', '--email', 'ANALYST@example.com')).rejects.toThrow('exists');

    printed.length = 0;
    expect(await admin('users', 'reset-password', '--email', 'analyst@example.com')).toBe(0);
    expect(printed.join('\n')).toMatch(/http:\/\/localhost:8000\/setup\?token=/);
    expect(await admin('users', 'reset-password', '--email', 'nobody@example.com')).toBe(1);
    printed.length = 0;
    expect(await admin('users', 'list')).toBe(0);
    expect(printed.join('\n')).toMatch(/analyst@example\.com\s+not set/);
    await expect(admin('users', 'create', '--email', 'not-an-address')).rejects.toThrow(UsageError);
  });

  it('refuses unknown scopes, projects and commands', async () => {
    await expect(admin('keys', 'create', '--label', 'x', '--scopes', 'rocket:launch')).rejects.toThrow(UsageError);
    await expect(admin('keys', 'create', '--label', 'x', '--scopes', '*', '--project', '999')).rejects.toThrow('no project 999');
    await expect(admin('projects', 'create', '--name', 'x', '--timezone', 'Mars/Olympus')).rejects.toThrow('unknown time zone');
    await expect(admin('keys', 'rotate')).rejects.toThrow('unknown command');
  });
});

describe('npm run admin on the embedded data directory', () => {
  it('creates a key and a project in the data directory the server opens', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
    try {
      const env = { ...process.env, SIGHTLINE_DATA_DIR: dataDir, DATABASE_URL: '' };
      const created = await run('npm', ['run', '-s', 'admin', '--', 'keys', 'create', '--label', 'ci', '--scopes', 'feature_flag:read'], { cwd: REPO, env });
      const value = /shown once\): (phx_\S+)/.exec(created.stdout)![1]!;
      const project = await run('npm', ['run', '-s', 'admin', '--', 'projects', 'create', '--name', 'Embedded'], { cwd: REPO, env });
      const token = /project API key (phc_\S+)/.exec(project.stdout)![1]!;
      const db = await createMetadataStore({ dataDir });
      try {
        expect(await findPrincipalByKeyHash(db, hashPersonalApiKey(value))).toMatchObject({ scopes: ['feature_flag:read'] });
        expect((await findProjectByToken(db, token))?.name).toBe('Embedded');
      } finally {
        await db.close();
      }
      const bad = await run('npm', ['run', '-s', 'admin', '--', 'keys', 'create', '--label', 'x', '--scopes', 'nope'], { cwd: REPO, env }).catch(
        (e: { code: number; stderr: string }) => e,
      );
      expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('unknown scope(s): nope') });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
