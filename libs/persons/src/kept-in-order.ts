/**
 * Per project, a value by key, bounded: at most `capacity` keys over all projects, the one added
 * longest ago forgotten first (setting a key already held keeps its place). One map lookup per
 * get, where two generations take two for a key in the older one or missing: the kept persons
 * are looked up for every distinct id of every run, most of them missing or found in the older.
 */
export class KeptInOrder<V> {
  private readonly byProject = new Map<number, Map<string, V>>();
  /** Insertion order, a ring of `capacity` slots: the next key to forget is at `oldest`. */
  private readonly orderTeams: number[] = [];
  private readonly orderKeys: string[] = [];
  private oldest = 0;
  private held = 0;
  /** `onForget`: told of each value the bound pushes out (not of those deleted on request). */
  constructor(
    private readonly capacity: number,
    private readonly onForget?: (value: V) => void,
  ) {}

  get(teamId: number, key: string): V | undefined {
    return this.byProject.get(teamId)?.get(key);
  }

  set(teamId: number, key: string, value: V): void {
    let kept = this.byProject.get(teamId);
    if (!kept) this.byProject.set(teamId, (kept = new Map()));
    const size = kept.size;
    kept.set(key, value);
    if (kept.size === size) return;
    if (this.held === this.capacity) {
      // A slot whose key was deleted since may name a key set again later: deleting it then
      // forgets that one early, which a bound allows.
      const project = this.byProject.get(this.orderTeams[this.oldest]!);
      const forgotten = project?.get(this.orderKeys[this.oldest]!);
      if (forgotten !== undefined) {
        project!.delete(this.orderKeys[this.oldest]!);
        this.onForget?.(forgotten);
      }
      this.orderTeams[this.oldest] = teamId;
      this.orderKeys[this.oldest] = key;
      this.oldest = (this.oldest + 1) % this.capacity;
    } else {
      this.orderTeams.push(teamId);
      this.orderKeys.push(key);
      this.held++;
    }
  }

  delete(teamId: number, key: string): void {
    this.byProject.get(teamId)?.delete(key);
  }

  /** Keys held over all projects (what the bound limits). */
  get size(): number {
    let size = 0;
    for (const kept of this.byProject.values()) size += kept.size;
    return size;
  }
}
