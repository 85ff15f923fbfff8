import type { IngestMessage } from '@sightline/ingestion';
import { alwaysAnOutage } from './dependency-errors';
import { drop, ok, runStep, type StepResult } from './step-result';

/**
 * The project of each message: the gateway's `team_id` when it knew it, else the token
 * resolved once per run (a run holds many events of few projects). An unknown token is
 * dropped (`unknown_project`); a key store that cannot be read is an outage for the whole run.
 */
export function createTeamStep(resolveTeam: (token: string) => Promise<number | null>) {
  const resolved = new Map<string, number | null>();
  return async (message: IngestMessage): Promise<StepResult<number>> => {
    if (typeof message.team_id === 'number') return ok(message.team_id);
    if (!resolved.has(message.token)) resolved.set(message.token, await runStep('team', alwaysAnOutage, () => resolveTeam(message.token)));
    const teamId = resolved.get(message.token) ?? null;
    return teamId === null ? drop('unknown_project') : ok(teamId);
  };
}
