import { StepError } from './step-result';
import { createTeamStep } from './team.step';
import { ingestMessage } from '../testing/ingest-message';

describe('team step', () => {
  it("keeps the gateway's team and resolves a missing one once per token", async () => {
    const lookups: string[] = [];
    const team = createTeamStep(async (token) => {
      lookups.push(token);
      return token === 'phc_known' ? 9 : null;
    });
    expect(await team(ingestMessage({ team_id: 3 }))).toEqual({ kind: 'ok', value: 3 });
    expect(await team(ingestMessage({ team_id: null, token: 'phc_known' }))).toEqual({ kind: 'ok', value: 9 });
    expect(await team(ingestMessage({ team_id: null, token: 'phc_known' }))).toEqual({ kind: 'ok', value: 9 });
    expect(await team(ingestMessage({ team_id: null, token: 'phc_gone' }))).toEqual({ kind: 'drop', reason: 'unknown_project' });
    expect(lookups).toEqual(['phc_known', 'phc_gone']);
  });

  it('answers at once, without a promise, when the project is known', async () => {
    const team = createTeamStep(async (token) => (token === 'phc_known' ? 9 : null));
    expect(team(ingestMessage({ team_id: 3 }))).toEqual({ kind: 'ok', value: 3 });
    const first = team(ingestMessage({ team_id: null, token: 'phc_known' }));
    expect(first).toBeInstanceOf(Promise);
    await first;
    await team(ingestMessage({ team_id: null, token: 'phc_gone' }));
    expect(team(ingestMessage({ team_id: null, token: 'phc_known' }))).toEqual({ kind: 'ok', value: 9 });
    expect(team(ingestMessage({ team_id: null, token: 'phc_gone' }))).toEqual({ kind: 'drop', reason: 'unknown_project' });
  });

  it('makes an unreadable key store an outage of the run, not a drop', async () => {
    const team = createTeamStep(async () => {
      throw new Error('connection refused');
    });
    const failure = await Promise.resolve(team(ingestMessage({ team_id: null }))).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StepError);
    expect(failure).toMatchObject({ step: 'team', outage: true });
  });
});
