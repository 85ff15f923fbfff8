import type { ProjectTokenLookup } from '@sightline/accounts';

/** What the gateway knows about a project API key. */
export type KeyResolution = { status: 'known'; teamId: number } | { status: 'unknown' } | { status: 'unavailable' };

export interface ProjectKeyResolver {
  resolve(token: string): Promise<KeyResolution>;
}

/** When the key store cannot be reached the answer is "unavailable" and the gateway fails open. */
export function createProjectKeyResolver(lookup: ProjectTokenLookup): ProjectKeyResolver {
  return {
    resolve: (token) =>
      lookup(token).then(
        (teamId): KeyResolution => (teamId === null ? { status: 'unknown' } : { status: 'known', teamId }),
        (): KeyResolution => ({ status: 'unavailable' }),
      ),
  };
}
