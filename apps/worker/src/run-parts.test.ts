import type { ConsumedBatch } from '@sightline/bus';
import { messagesIn, splitRun, type RunPart } from './run-parts';

const batch = (partition: number, count: number): ConsumedBatch => ({
  topic: 'events',
  partition,
  messages: Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`${partition}:${i}`), headers: {}, offset: String(i) })),
});
const whole = (b: ConsumedBatch): RunPart => ({ batch: b, messages: b.messages });
/** Each message as "partition:index", in the parts' order. */
const labels = (parts: readonly RunPart[]) => parts.flatMap((p) => p.messages.map((m) => `${p.batch.partition}:${m.value.toString()}`));

describe('splitRun', () => {
  const run = [whole(batch(0, 3)), whole(batch(1, 2)), whole(batch(2, 4))];

  it.each([0, 1, 3, 4, 5, 8, 9])('splits after %i messages, in order, each message with its batch', (count) => {
    const [left, right] = splitRun(run, count);
    expect(messagesIn(left)).toBe(count);
    expect(messagesIn(right)).toBe(9 - count);
    expect([...labels(left), ...labels(right)]).toEqual(labels(run));
    for (const part of [...left, ...right]) {
      expect(part.messages.length).toBeGreaterThan(0);
      for (const m of part.messages) expect(m.value.toString().startsWith(`${part.batch.partition}:`)).toBe(true);
    }
  });

  it('keeps whole batches as they are when the cut falls between them', () => {
    const [left, right] = splitRun(run, 3);
    expect(left).toEqual([run[0]]);
    expect(right[0]).toBe(run[1]);
  });

  it('halves down to single messages', () => {
    let parts: RunPart[] = run;
    while (messagesIn(parts) > 1) parts = splitRun(parts, Math.ceil(messagesIn(parts) / 2))[1];
    expect(labels(parts)).toEqual(['2:2:3']);
  });
});
