/**
 * Turns of the event loop for long work (building a large answer, parsing many rows, making an
 * export), handed out one at a time: each `await nextWorkTurn()` resumes alone, after the loop
 * has polled for I/O, and the next waiter only on the loop's following turn.
 *
 * A bare `setImmediate` between slices is not enough once several requests do long work at
 * once: every immediate queued before the loop reaches its check phase runs in that one phase,
 * so ten requests each yielding after a 20 ms slice hold capture and decide for 200 ms.
 * Taking turns here, the process is held for one slice at a time, whoever's it is.
 */
const waiting: (() => void)[] = [];
let scheduled = false;

function resumeNext(): void {
  const resume = waiting.shift();
  // Scheduled from within the check phase, the next immediate runs on the loop's next turn.
  if (waiting.length > 0) setImmediate(resumeNext);
  else scheduled = false;
  resume?.();
}

/** Resolves on a turn of the event loop of its own (in the order asked), after pending I/O has been served. */
export function nextWorkTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(resumeNext);
    }
  });
}
