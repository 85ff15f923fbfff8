import express, { Router, type Request, type Response } from 'express';
import {
  consumePasswordSetupToken,
  deleteSession,
  findPasswordSetupTokenUser,
  findSessionByTokenHash,
  findUserByEmail,
  findUserById,
  insertSession,
  setUserEmail,
  setUserPassword,
} from '@sightline/accounts';
import {
  CSRF_COOKIE,
  csrfProblem,
  generateSecretToken,
  hashPassword,
  hashSecretToken,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  SESSION_COOKIE,
  sessionTokenOf,
  verifyPassword,
} from '@sightline/auth';
import { errors, inputGuard } from '@sightline/http';
import type { MetadataStore } from '@sightline/postgres';
import type { SignInThrottle } from './sign-in-throttle';

/** Django's default session age (two weeks), which PostHog keeps. */
export const SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;

const EMAIL = /^[^\s@]+@[^\s@]+$/;

function stringField(body: unknown, name: string, options: { max: number; min?: number }): string {
  const value = (body as Record<string, unknown> | null)?.[name];
  if (value === undefined || value === null || value === '') throw errors.validation('This field is required.', name, 'required');
  if (typeof value !== 'string') throw errors.validation('Not a valid string.', name, 'invalid');
  if (value.length > options.max) throw errors.validation(`Ensure this field has no more than ${options.max} characters.`, name, 'max_length');
  if (options.min !== undefined && value.length < options.min)
    throw errors.validation(`Ensure this field has at least ${options.min} characters.`, name, 'min_length');
  return value;
}

function emailField(body: unknown): string {
  const email = stringField(body, 'email', { max: 254 }).trim();
  if (!EMAIL.test(email)) throw errors.validation('Enter a valid email address.', 'email', 'invalid');
  return email;
}

/** The password hashing the routes do (argon2id); a parameter so tests can count the work. */
export interface PasswordHashing {
  hash(password: string): Promise<string>;
  verify(storedHash: string, password: string): Promise<boolean>;
}

const ARGON2: PasswordHashing = { hash: hashPassword, verify: verifyPassword };

const invalidToken = () => errors.validation('This link is invalid, used or expired. Restart Sightline for a new first-start link.', 'token', 'invalid_token');

/**
 * Signing in to the web app: POST /api/login/ (e-mail and password), POST /api/logout/, and
 * POST /api/password_setup/ (a one-time link's token and the password chosen with it). A session
 * is a random token in an HttpOnly, SameSite=Lax cookie (stored hashed); beside it a readable
 * cookie carries the session's CSRF token, which the page sends back on every write.
 */
export function createLoginRouter(deps: { db: MetadataStore; now: () => number; signInThrottle?: SignInThrottle; passwords?: PasswordHashing }): Router {
  const { db } = deps;
  const passwords = deps.passwords ?? ARGON2;
  const router = Router();
  const body = [express.json({ limit: '16kb' }), inputGuard()];
  // Checked when the e-mail is unknown or has no password, so such an attempt takes as long as a wrong password.
  let standIn: Promise<string> | null = null;
  const standInHash = () => (standIn ??= passwords.hash(generateSecretToken()));

  const startSession = async (req: Request, res: Response, userId: number) => {
    const token = generateSecretToken();
    const csrfToken = generateSecretToken();
    const expiresAt = new Date(deps.now() + SESSION_TTL_MS);
    await insertSession(db, { tokenHash: hashSecretToken(token), csrfToken, userId, expiresAt });
    const common = { path: '/', sameSite: 'lax' as const, secure: req.secure, expires: expiresAt };
    res.cookie(SESSION_COOKIE, token, { ...common, httpOnly: true });
    res.cookie(CSRF_COOKIE, csrfToken, { ...common, httpOnly: false });
  };

  const endSession = (res: Response) => {
    res.clearCookie(SESSION_COOKIE, { path: '/' });
    res.clearCookie(CSRF_COOKIE, { path: '/' });
  };

  router.post('/api/login', ...body, async (req, res) => {
    const email = emailField(req.body);
    const password = stringField(req.body, 'password', { max: MAX_PASSWORD_LENGTH });
    const ip = req.ip ?? '';
    // Counted before the password is checked: a locked-out pair learns nothing, right or wrong,
    // and concurrent guesses cannot all pass a count that is read before any of them is recorded.
    await deps.signInThrottle?.beginSignIn(email, ip);
    const user = await findUserByEmail(db, email);
    const ok = await passwords.verify(user?.passwordHash ?? (await standInHash()), password);
    if (!user || !user.passwordHash || !ok) {
      res.status(400).json({ type: 'validation_error', code: 'invalid_credentials', detail: 'Invalid email or password.', attr: null });
      return;
    }
    await deps.signInThrottle?.signedIn(email, ip);
    await startSession(req, res, user.id);
    res.json({ success: true });
  });

  router.post('/api/logout', async (req, res) => {
    const token = sessionTokenOf(req);
    if (token) {
      const session = await findSessionByTokenHash(db, hashSecretToken(token), new Date(deps.now()));
      if (session) {
        const problem = csrfProblem(req, session.csrfToken);
        if (problem) throw errors.permissionDenied(problem);
        await deleteSession(db, hashSecretToken(token));
      }
    }
    endSession(res);
    res.json({ success: true });
  });

  router.post('/api/password_setup', ...body, async (req, res) => {
    const token = stringField(req.body, 'token', { max: 200 });
    const password = stringField(req.body, 'password', { max: MAX_PASSWORD_LENGTH, min: MIN_PASSWORD_LENGTH });
    const email = (req.body as Record<string, unknown>)['email'] === undefined ? null : emailField(req.body);
    const ip = req.ip ?? '';
    await deps.signInThrottle?.beginPasswordSetup(ip);
    const tokenHash = hashSecretToken(token);
    // The link is checked before any argon2 work: a request without a usable one costs a lookup.
    if ((await findPasswordSetupTokenUser(db, tokenHash, new Date(deps.now()))) === null) throw invalidToken();
    const passwordHash = await passwords.hash(password);
    const outcome = await db.transaction(async (tx): Promise<{ userId: number } | 'invalid' | 'email_taken'> => {
      const id = await consumePasswordSetupToken(tx, tokenHash, new Date(deps.now()));
      if (id === null) return 'invalid';
      if (email !== null) {
        const holder = await findUserByEmail(tx, email);
        // Committed with the link spent and nothing else changed: one link tells whether one
        // e-mail is taken, once, instead of answering for every address anyone tries with it.
        if (holder && holder.id !== id) return 'email_taken';
        await setUserEmail(tx, id, email);
      }
      await setUserPassword(tx, id, passwordHash);
      return { userId: id };
    });
    if (outcome === 'invalid') throw invalidToken();
    if (outcome === 'email_taken')
      throw errors.validation('Another user has this e-mail address. This link is now used: ask for a new one.', 'email', 'unique');
    const { userId } = outcome;
    await deps.signInThrottle?.passwordSetUp(ip);
    const user = await findUserById(db, userId);
    await startSession(req, res, userId);
    res.json({ success: true, email: user?.email });
  });

  return router;
}
