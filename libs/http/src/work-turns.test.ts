import { nextWorkTurn } from './work-turns';

/** Counts turns of the event loop: one tick per check phase, rescheduled for the next. */
function loopTurns(): { now(): number; stop(): void } {
  let turns = 0;
  let running = true;
  const tick = () => {
    turns++;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return { now: () => turns, stop: () => void (running = false) };
}

describe('nextWorkTurn', () => {
  it('resumes each waiter on a turn of the event loop of its own, in the order they asked', async () => {
    const turns = loopTurns();
    const resumed: { who: number; turn: number }[] = [];
    await Promise.all([1, 2, 3, 4].map(async (who) => resumed.push((await nextWorkTurn(), { who, turn: turns.now() }))));
    turns.stop();
    expect(resumed.map((r) => r.who)).toEqual([1, 2, 3, 4]);
    // A bare setImmediate resumes all four in one check phase (the same turn); here none share one.
    expect(new Set(resumed.map((r) => r.turn)).size).toBe(4);
  });

  it("lets what came due during one waiter's slice run before the next waiter", async () => {
    const order: string[] = [];
    let timer!: Promise<void>;
    const a = nextWorkTurn().then(() => {
      order.push('a');
      timer = new Promise((resolve) => setTimeout(() => (order.push('timer'), resolve()), 0));
      // A slice of work long enough for the timer to be due when it ends.
      const until = Date.now() + 5;
      while (Date.now() < until);
    });
    const b = nextWorkTurn().then(() => order.push('b'));
    await Promise.all([a, b]);
    await timer;
    expect(order).toEqual(['a', 'timer', 'b']);
  });
});
