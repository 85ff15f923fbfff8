import type { ConsumedBatch, ConsumedMessage } from '@sightline/bus';

/**
 * Messages of one batch in a run: the whole batch, or part of it once a failing run is split. A
 * run is a list of these, not an object per message pairing it with its batch: a run holds tens
 * of thousands of messages, and such objects would live (and be collected) with it.
 */
export interface RunPart {
  batch: ConsumedBatch;
  messages: readonly ConsumedMessage[];
}

/** How many messages the parts hold. */
export const messagesIn = (parts: readonly RunPart[]) => parts.reduce((n, part) => n + part.messages.length, 0);

/** The parts' first `count` messages and the rest, in order. */
export function splitRun(parts: readonly RunPart[], count: number): [RunPart[], RunPart[]] {
  const left: RunPart[] = [];
  const right: RunPart[] = [];
  let rest = count;
  for (const part of parts) {
    const n = part.messages.length;
    if (rest >= n) left.push(part);
    else if (rest <= 0) right.push(part);
    else {
      left.push({ batch: part.batch, messages: part.messages.slice(0, rest) });
      right.push({ batch: part.batch, messages: part.messages.slice(rest) });
    }
    rest -= n;
  }
  return [left, right];
}
