import { randomUUID } from 'node:crypto';
import type { MetadataStore } from '@sightline/postgres';
import { generatePersonalApiKey, generateProjectApiKey, hashPersonalApiKey, maskPersonalApiKey } from '@sightline/auth';
import { insertPersonalKey } from './personal-keys.repository';

export interface BootstrapResult {
  /** false when the instance was already set up (nothing created, nothing to print). */
  created: boolean;
  projectId: number;
  projectApiKey: string;
  /** Only known at creation: it is stored hashed. */
  personalApiKey?: string;
}

// Arbitrary constant identifying "first-start bootstrap" among advisory locks.
const BOOTSTRAP_LOCK_KEY = 7_344_615_002;

/**
 * First start: a default organisation, project 1 with its project API key, a user, and a
 * personal API key with every scope. Given keys are used as they are. Safe when several
 * processes start at once (advisory lock; the second finds the work done).
 */
export async function bootstrapInstance(db: MetadataStore, options: { projectApiKey?: string; personalApiKey?: string } = {}): Promise<BootstrapResult> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [BOOTSTRAP_LOCK_KEY]);
    const existing = await tx.query<{ id: number; api_token: string }>('SELECT id, api_token FROM projects ORDER BY id LIMIT 1');
    if (existing[0]) return { created: false, projectId: existing[0].id, projectApiKey: existing[0].api_token };

    const organizationId = randomUUID();
    await tx.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [organizationId, 'Default organization']);
    const userUuid = randomUUID();
    const [user] = await tx.query<{ id: number }>(
      `INSERT INTO users (uuid, distinct_id, organization_id, first_name, email, is_email_verified, role_at_organization)
       VALUES ($1, $2, $3, 'Admin', 'admin@sightline.local', true, 'engineering') RETURNING id`,
      [userUuid, randomUUID(), organizationId],
    );
    const projectApiKey = options.projectApiKey ?? generateProjectApiKey();
    const [project] = await tx.query<{ id: number }>(
      `INSERT INTO projects (uuid, organization_id, name, api_token) VALUES ($1, $2, 'Default project', $3) RETURNING id`,
      [randomUUID(), organizationId, projectApiKey],
    );
    const personalApiKey = options.personalApiKey ?? generatePersonalApiKey();
    await insertPersonalKey(tx, {
      userId: user!.id,
      label: 'Bootstrap key',
      secureValue: hashPersonalApiKey(personalApiKey),
      maskValue: maskPersonalApiKey(personalApiKey),
      scopes: ['*'],
    });
    return { created: true, projectId: project!.id, projectApiKey, personalApiKey };
  });
}

/** The one-time banner printed on first start. */
export function formatBootstrapBanner(result: BootstrapResult, baseUrl: string): string {
  return [
    '',
    '  Sightline is set up. Keep these keys: the personal key is shown only this once.',
    `    project id:        ${result.projectId}`,
    `    project API key:   ${result.projectApiKey}   (SDKs: capture and flags)`,
    `    personal API key:  ${result.personalApiKey}   (Authorization: Bearer … on ${baseUrl}/api/)`,
    '',
  ].join('\n');
}
