/**
 * Per project, a value by key, bounded in two generations: keys are recorded in the current
 * generation (a key already there is updated in place, no reordering); once the current holds
 * `capacity / 2` keys over all projects it becomes the previous one and the previous is
 * forgotten. So at most `capacity` keys are held, and at least the last `capacity / 2` recorded
 * are remembered. A key found only in the previous generation is still known; recorded again,
 * it moves to the current.
 */
export class KeptByProject<V> {
  private current = new Map<number, Map<string, V>>();
  private previous = new Map<number, Map<string, V>>();
  private currentSize = 0;
  private readonly generationSize: number;
  constructor(capacity: number) {
    this.generationSize = Math.max(1, Math.floor(capacity / 2));
  }

  get(teamId: number, key: string): V | undefined {
    const value = this.current.get(teamId)?.get(key);
    return value !== undefined ? value : this.previous.get(teamId)?.get(key);
  }

  set(teamId: number, key: string, value: V): void {
    let kept = this.current.get(teamId);
    if (!kept) this.current.set(teamId, (kept = new Map()));
    const size = kept.size;
    kept.set(key, value);
    if (kept.size === size || ++this.currentSize < this.generationSize) return;
    this.previous = this.current;
    this.current = new Map();
    this.currentSize = 0;
  }

  /** Forgets a key in both generations (the current's count stays: it only bounds what was added). */
  delete(teamId: number, key: string): void {
    this.current.get(teamId)?.delete(key);
    this.previous.get(teamId)?.delete(key);
  }

  /** Keys held over both generations (a key in both counts twice): what the bound limits. */
  get heldKeys(): number {
    let held = 0;
    for (const generation of [this.current, this.previous]) for (const keys of generation.values()) held += keys.size;
    return held;
  }
}
