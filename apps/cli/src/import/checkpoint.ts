import fs from 'node:fs';

/** What a resumed import needs per file: which content it was, and how many lines are done. */
export interface FileCheckpoint {
  path: string;
  identity: string;
  /** Every line up to and including this one was acknowledged by the service (or rejected, or filtered out). */
  linesDone: number;
  /** The whole file is done. */
  complete: boolean;
}

export interface Checkpoint {
  version: 1;
  files: FileCheckpoint[];
}

export class CheckpointError extends Error {}

export function readCheckpoint(path: string): Checkpoint | null {
  if (!fs.existsSync(path)) return null;
  const parsed = JSON.parse(fs.readFileSync(path, 'utf8')) as Checkpoint;
  if (parsed.version !== 1 || !Array.isArray(parsed.files)) throw new CheckpointError(`${path} is not a sightline import checkpoint.`);
  return parsed;
}

/** Written to a temporary file and renamed over the old one, so a crash leaves the old or the new, never half of one. */
export function writeCheckpoint(path: string, checkpoint: Checkpoint): void {
  const temporary = `${path}.tmp-${process.pid}`;
  fs.writeFileSync(temporary, JSON.stringify(checkpoint, null, 2));
  fs.renameSync(temporary, path);
}

/**
 * The last line of a file below which everything is settled, while batches are acknowledged out
 * of order: lines in no batch (rejected, filtered) count as settled once read.
 */
export class LineWatermark {
  private readonly open = new Map<number, number>(); // batch id → its first line
  private readLines = 0;

  constructor(private doneBefore = 0) {}

  /** Every line up to `line` has been read (and is in a batch, rejected or filtered). */
  read(line: number): void {
    this.readLines = Math.max(this.readLines, line);
  }

  opened(batchId: number, firstLine: number): void {
    this.open.set(batchId, firstLine);
  }

  acknowledged(batchId: number): void {
    this.open.delete(batchId);
  }

  get linesDone(): number {
    if (this.open.size === 0) return Math.max(this.doneBefore, this.readLines);
    return Math.max(this.doneBefore, Math.min(...this.open.values()) - 1);
  }
}
