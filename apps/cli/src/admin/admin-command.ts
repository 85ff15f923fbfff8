import { parseArgs } from 'node:util';
import {
  bootstrapInstance,
  deletePersonalKey,
  findProjectById,
  findUserByEmail,
  insertProject,
  insertUser,
  issuePasswordSetupToken,
  issuePersonalKey,
  listAllProjects,
  listPersonalKeys,
  listUsers,
  passwordSetupUrl,
  PASSWORD_SETUP_TTL_MS,
  PRINCIPAL_CACHE_MAX_AGE_MS,
  type PrincipalChanges,
} from '@sightline/accounts';
import { generateProjectApiKey, isKnownScope } from '@sightline/auth';
import { withDeadline } from '@sightline/deadline';
import { checkTimezone } from '@sightline/insights';
import type { MetadataStore } from '@sightline/postgres';
import { UsageError } from '../import';

export const ADMIN_USAGE = `usage: npm run admin -- <command>

  keys create --label L --scopes a:read,b:write [--project N]...   issue a personal API key (printed once)
  keys list                                                          every key, masked
  keys revoke <id>                                                   delete a key: running servers refuse it at once (told through REDIS_URL), else within 3 s
  projects create --name N [--timezone TZ]                           a project with a new project API key
  projects list                                                      every project and its project API key
  users create --email E [--name N] [--url U]                        a web app user; prints a one-time link to choose a password
  users reset-password --email E [--url U]                           a new one-time password link (the old password works until it is used)
  users list                                                         every user and whether they have a password

--url is the address the web app is opened at (default http://localhost:8000).

Works on the store the server uses: DATABASE_URL when set (distributed mode), else the embedded
data directory SIGHTLINE_DATA_DIR (default ./data; stop the embedded server first, as only one
process may open it). In distributed mode, set REDIS_URL as the api has it so that keys revoke
tells running api processes at once.`;

/** The owner of keys issued from the command line: the instance's first user (the one bootstrap created). */
async function operatorUser(db: MetadataStore): Promise<{ id: number; organization_id: string }> {
  const [user] = await db.query<{ id: number; organization_id: string }>('SELECT id, organization_id FROM users ORDER BY id LIMIT 1');
  if (!user) throw new UsageError('this instance has no user yet');
  return user;
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** What the admin command tells running servers through, when they can hear it. */
export interface AdminAnnouncements {
  /**
   * The api processes' personal key change channel (distributed mode with REDIS_URL): a revoked
   * key's owner is announced on it, so their principal caches drop the key at once.
   */
  principalChanges?: Pick<PrincipalChanges, 'publish'>;
  /** How long an announcement may take before the command gives up on it (the key is revoked either way). */
  announceTimeoutMs?: number;
}

const CACHE_BOUND = `${PRINCIPAL_CACHE_MAX_AGE_MS / 1000} s`;

/** Publishes within a bounded wait (an unreachable Redis must not hold the command): null, or why not. */
async function announce(publish: () => Promise<void>, timeoutMs: number): Promise<string | null> {
  try {
    await withDeadline(publish(), timeoutMs, () => new Error(`no answer within ${timeoutMs} ms`));
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Runs one admin command on the store; what it prints goes to `out`. Exit code 0 on success. */
export async function runAdminCommand(
  argv: readonly string[],
  db: MetadataStore,
  out: (text: string) => void,
  announcements: AdminAnnouncements = {},
): Promise<number> {
  const [noun, verb, ...rest] = argv;
  // On a fresh data directory the first command sets the instance up, as a first start would.
  const setup = await bootstrapInstance(db);
  if (setup.created) out(`set up a new instance: project ${setup.projectId}, bootstrap personal API key ${setup.personalApiKey} (shown once)`);

  if (noun === 'keys' && verb === 'create') {
    const { values } = parseArgs({
      args: [...rest],
      options: { label: { type: 'string' }, scopes: { type: 'string' }, project: { type: 'string', multiple: true } },
      strict: true,
    });
    const label = values.label?.trim();
    if (!label) throw new UsageError('--label is required');
    if (label.length > 40) throw new UsageError('--label has at most 40 characters');
    const scopes = (values.scopes ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (scopes.length === 0) throw new UsageError('--scopes is required (comma-separated, e.g. insight:read,person:read, or *)');
    const unknown = scopes.filter((s) => !isKnownScope(s));
    if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ')}`);
    const projects: number[] = [];
    for (const raw of values.project ?? []) {
      const id = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
      if (!Number.isInteger(id) || !(await findProjectById(db, id))) throw new UsageError(`no project ${raw}`);
      projects.push(id);
    }
    const user = await operatorUser(db);
    const { key, value } = await issuePersonalKey(db, { userId: user.id, label, scopes, scopedTeams: projects.length > 0 ? projects : null });
    out(`key ${key.id} "${key.label}" scopes ${key.scopes.join(',')}${projects.length ? ` projects ${projects.join(',')}` : ''}`);
    out(`personal API key (shown once): ${value}`);
    return 0;
  }
  if (noun === 'keys' && verb === 'list') {
    const keys = await listPersonalKeys(db, null);
    out(
      table([
        ['id', 'label', 'value', 'scopes', 'projects', 'last used'],
        ...keys.map((k) => [
          String(k.id),
          k.label,
          k.mask_value,
          k.scopes.join(','),
          k.scoped_teams?.join(',') ?? 'all',
          k.last_used_at ? new Date(k.last_used_at).toISOString() : 'never',
        ]),
      ]),
    );
    return 0;
  }
  if (noun === 'keys' && verb === 'revoke') {
    const raw = rest[0];
    if (!raw || !/^\d{1,9}$/.test(raw)) throw new UsageError('keys revoke <id>: the id from `keys list`');
    // The DELETE commits on its own, before anyone is told: a server that hears the announcement
    // and looks the key up again finds it gone.
    const deleted = await deletePersonalKey(db, null, Number(raw));
    if (!deleted) {
      out(`no key ${raw}`);
      return 1;
    }
    const { principalChanges } = announcements;
    if (!principalChanges) {
      out(`key ${raw} revoked; running servers refuse it within ${CACHE_BOUND}`);
      return 0;
    }
    const failure = await announce(() => principalChanges.publish(deleted.userId), announcements.announceTimeoutMs ?? 5_000);
    out(
      failure
        ? `key ${raw} revoked; could not tell running servers through Redis (${failure}): they refuse it within ${CACHE_BOUND}`
        : `key ${raw} revoked; running servers told to refuse it at once`,
    );
    return 0;
  }
  if (noun === 'projects' && verb === 'create') {
    const { values } = parseArgs({ args: [...rest], options: { name: { type: 'string' }, timezone: { type: 'string' } }, strict: true });
    const name = values.name?.trim();
    if (!name) throw new UsageError('--name is required');
    if (name.length > 200) throw new UsageError('--name has at most 200 characters');
    let timezone: string;
    try {
      timezone = checkTimezone(values.timezone ?? 'UTC');
    } catch {
      throw new UsageError(`unknown time zone "${values.timezone}"`);
    }
    const user = await operatorUser(db);
    const project = await insertProject(db, { organizationId: user.organization_id, name, apiToken: generateProjectApiKey(), timezone });
    out(`project ${project.id} "${project.name}" project API key ${project.api_token}`);
    return 0;
  }
  if (noun === 'projects' && verb === 'list') {
    const projects = await listAllProjects(db);
    out(table([['id', 'name', 'project API key', 'timezone'], ...projects.map((p) => [String(p.id), p.name, p.api_token, p.timezone])]));
    return 0;
  }
  if (noun === 'users' && (verb === 'create' || verb === 'reset-password')) {
    const { values } = parseArgs({ args: [...rest], options: { email: { type: 'string' }, name: { type: 'string' }, url: { type: 'string' } }, strict: true });
    const email = values.email?.trim();
    if (!email || !/^[^\s@]+@[^\s@]+$/.test(email) || email.length > 254) throw new UsageError('--email is required (an e-mail address)');
    const baseUrl = (values.url ?? 'http://localhost:8000').replace(/\/+$/, '');
    if (!/^https?:\/\/\S+$/.test(baseUrl)) throw new UsageError('--url must be an http(s) address');
    let user = await findUserByEmail(db, email);
    if (verb === 'create') {
      if (user) throw new UsageError(`a user with e-mail ${email} exists (use users reset-password)`);
      const operator = await operatorUser(db);
      user = await insertUser(db, { organizationId: operator.organization_id, email, firstName: values.name?.trim().slice(0, 150) ?? '' });
      out(`user ${user.id} ${user.email} created`);
    } else if (!user) {
      out(`no user with e-mail ${email}`);
      return 1;
    }
    const token = await issuePasswordSetupToken(db, user.id, Date.now());
    out(`one-time link to choose a password (valid ${PASSWORD_SETUP_TTL_MS / 3_600_000} hours): ${passwordSetupUrl(baseUrl, token)}`);
    return 0;
  }
  if (noun === 'users' && verb === 'list') {
    const users = await listUsers(db);
    out(table([['id', 'e-mail', 'password'], ...users.map((u) => [String(u.id), u.email, u.passwordHash ? 'set' : 'not set'])]));
    return 0;
  }
  throw new UsageError(noun === undefined ? 'a command is required' : `unknown command "${[noun, verb].filter(Boolean).join(' ')}"`);
}
