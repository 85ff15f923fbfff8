import type { ImportEvent, RejectReason } from './event-check';

/** Line numbers kept per reason and file: enough to find the pattern, bounded for a 5 GB file. */
const LINES_KEPT = 100;

/**
 * What an import (or a dry run) saw: counts by rejection reason with line numbers, an event-name
 * histogram, the timestamp range, distinct ids, and what was sent and acknowledged.
 */
export class ImportReport {
  accepted = 0;
  sent = 0;
  retried = 0;
  filteredOut = 0;
  valid = 0;
  readonly rejected = new Map<RejectReason, { count: number; lines: Map<string, number[]> }>();
  readonly eventNames = new Map<string, number>();
  readonly distinctIds = new Set<string>();
  /** Distinct ids whose events set person properties or identify: persons the import will create or update. */
  readonly personIds = new Set<string>();
  firstTimestamp: string | null = null;
  lastTimestamp: string | null = null;

  reject(reason: RejectReason, file: string, line: number): void {
    let entry = this.rejected.get(reason);
    if (!entry) this.rejected.set(reason, (entry = { count: 0, lines: new Map() }));
    entry.count++;
    let lines = entry.lines.get(file);
    if (!lines) entry.lines.set(file, (lines = []));
    if (lines.length < LINES_KEPT) lines.push(line);
  }

  count(event: ImportEvent): void {
    this.valid++;
    this.eventNames.set(event.event, (this.eventNames.get(event.event) ?? 0) + 1);
    // Bounded: past a million ids the count is a lower bound, said so in the report.
    if (this.distinctIds.size < 1_000_000) this.distinctIds.add(event.distinct_id);
    if (event.properties['$process_person_profile'] !== false && this.personIds.size < 1_000_000) this.personIds.add(event.distinct_id);
    if (this.firstTimestamp === null || event.timestamp < this.firstTimestamp) this.firstTimestamp = event.timestamp;
    if (this.lastTimestamp === null || event.timestamp > this.lastTimestamp) this.lastTimestamp = event.timestamp;
  }

  get rejectedCount(): number {
    return [...this.rejected.values()].reduce((n, r) => n + r.count, 0);
  }

  toJSON() {
    return {
      valid: this.valid,
      sent: this.sent,
      accepted: this.accepted,
      retried: this.retried,
      filtered_out: this.filteredOut,
      rejected: this.rejectedCount,
      rejected_by_reason: Object.fromEntries([...this.rejected].map(([reason, r]) => [reason, { count: r.count, lines: Object.fromEntries(r.lines) }])),
      events: Object.fromEntries([...this.eventNames].sort((a, b) => b[1] - a[1])),
      timestamps: { first: this.firstTimestamp, last: this.lastTimestamp },
      distinct_ids: this.distinctIds.size,
      persons_to_create_or_update: this.personIds.size,
    };
  }

  toText(): string {
    const json = this.toJSON();
    const lines = [
      `events valid: ${json.valid}   sent: ${json.sent}   accepted: ${json.accepted}   retried requests: ${json.retried}`,
      `rejected: ${json.rejected}   filtered out by --from/--to: ${json.filtered_out}`,
    ];
    for (const [reason, r] of Object.entries(json.rejected_by_reason)) {
      lines.push(`  ${reason}: ${r.count}`);
      for (const [file, numbers] of Object.entries(r.lines))
        lines.push(`    ${file}: lines ${numbers.join(', ')}${numbers.length === LINES_KEPT ? ', …' : ''}`);
    }
    lines.push(`timestamps: ${json.timestamps.first ?? '-'} … ${json.timestamps.last ?? '-'}`);
    lines.push(`distinct ids: ${json.distinct_ids}   persons to create or update: ${json.persons_to_create_or_update}`);
    lines.push('events by name:');
    for (const [name, count] of Object.entries(json.events).slice(0, 50)) lines.push(`  ${count.toString().padStart(10)}  ${name}`);
    return lines.join('\n');
  }
}
