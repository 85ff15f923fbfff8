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
  const resultOf = (teamId: number | null): StepResult<number> => (teamId === null ? drop('unknown_project') : ok(teamId));
  const resolve = async (token: string): Promise<StepResult<number>> => {
    const teamId = await runStep('team', alwaysAnOutage, () => resolveTeam(token));
    resolved.set(token, teamId);
    return resultOf(teamId);
  };
  /** Answers at once (no promise) when the project is known: the gateway's or a token resolved earlier in the run. */
  return (message: IngestMessage): StepResult<number> | Promise<StepResult<number>> => {
    if (typeof message.team_id === 'number') return ok(message.team_id);
    const known = resolved.get(message.token);
    if (known !== undefined || resolved.has(message.token)) return resultOf(known ?? null);
    return resolve(message.token);
  };
}
