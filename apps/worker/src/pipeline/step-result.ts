/**
 * What one pipeline step decided for a message (PostHog's PipelineResult): carry on,
 * drop it on purpose (counted by reason), or send it unchanged to the dead-letter topic.
 */
export type StepResult<T> = { kind: 'ok'; value: T } | { kind: 'drop'; reason: string } | { kind: 'dead-letter'; error: string };

export const ok = <T>(value: T): StepResult<T> => ({ kind: 'ok', value });
export const drop = (reason: string): StepResult<never> => ({ kind: 'drop', reason });
export const deadLetter = (error: string): StepResult<never> => ({ kind: 'dead-letter', error });

/**
 * A step failed for the whole batch. `outage` says whether a dependency was unreachable
 * (retry the batch later, commit nothing, dead-letter nothing) or the input itself can
 * never succeed (find the message responsible and dead-letter it).
 */
export class StepError extends Error {
  constructor(
    readonly step: string,
    readonly outage: boolean,
    cause: unknown,
  ) {
    super(`${step}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Runs a batch step, labelling its failure with the step name and whether it was an outage. */
export async function runStep<T>(step: string, classify: (error: unknown) => boolean, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw new StepError(step, classify(error), error);
  }
}
