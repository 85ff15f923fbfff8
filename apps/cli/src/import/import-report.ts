import type { ImportEvent, RejectReason } from './event-check';
import type { TimeConversion } from './source-time';

/** Line numbers kept per reason and file: enough to find the pattern, bounded for a 5 GB file. */
const LINES_KEPT = 100;

/**
 * What an import (or a dry run) saw: counts by rejection reason with line numbers, an event-name
 * histogram, the timestamp range, distinct ids, and what was sent and acknowledged.
 */
interface LinesByReason {
  count: number;
  lines: Map<string, number[]>;
}

function addLine(byReason: Map<string, LinesByReason>, reason: string, file: string, line: number): void {
  let entry = byReason.get(reason);
  if (!entry) byReason.set(reason, (entry = { count: 0, lines: new Map() }));
  entry.count++;
  let lines = entry.lines.get(file);
  if (!lines) entry.lines.set(file, (lines = []));
  if (lines.length < LINES_KEPT) lines.push(line);
}

const linesJson = (byReason: Map<string, LinesByReason>) =>
  Object.fromEntries([...byReason].map(([reason, r]) => [reason, { count: r.count, lines: Object.fromEntries(r.lines) }]));

export class ImportReport {
  /** Events the service acknowledged and did not report dropped. */
  accepted = 0;
  sent = 0;
  retried = 0;
  filteredOut = 0;
  valid = 0;
  readonly rejected = new Map<RejectReason, LinesByReason>();
  /** Events the service answered 200 for but did not store (its `dropped` list), by its reason. */
  readonly droppedByService = new Map<string, LinesByReason>();
  /** Times read from a form the service would misread (microsecond epochs, `20240503`), by form. */
  readonly conversions = new Map<TimeConversion, number>();
  /** Events sent besides the source's own: aliases and group properties the source implies. */
  readonly derived = new Map<string, number>();
  /** Set when no record matched the format: what they look like instead. */
  formatHint: string | null = null;
  readonly eventNames = new Map<string, number>();
  readonly distinctIds = new Set<string>();
  /** Distinct ids whose events set person properties or identify: persons the import will create or update. */
  readonly personIds = new Set<string>();
  firstTimestamp: string | null = null;
  lastTimestamp: string | null = null;

  reject(reason: RejectReason, file: string, line: number): void {
    addLine(this.rejected, reason, file, line);
  }

  droppedBy(reason: string, file: string, line: number): void {
    addLine(this.droppedByService, reason, file, line);
  }

  converted(conversion: TimeConversion): void {
    this.conversions.set(conversion, (this.conversions.get(conversion) ?? 0) + 1);
  }

  countDerived(event: string): void {
    this.derived.set(event, (this.derived.get(event) ?? 0) + 1);
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

  get droppedCount(): number {
    return [...this.droppedByService.values()].reduce((n, r) => n + r.count, 0);
  }

  toJSON() {
    return {
      valid: this.valid,
      sent: this.sent,
      accepted: this.accepted,
      retried: this.retried,
      filtered_out: this.filteredOut,
      rejected: this.rejectedCount,
      rejected_by_reason: linesJson(this.rejected),
      dropped_by_service: this.droppedCount,
      dropped_by_service_by_reason: linesJson(this.droppedByService),
      converted_timestamps: Object.fromEntries(this.conversions),
      derived_events: Object.fromEntries(this.derived),
      format_hint: this.formatHint,
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
      `rejected: ${json.rejected}   dropped by the service: ${json.dropped_by_service}   filtered out by --from/--to: ${json.filtered_out}`,
    ];
    if (this.formatHint) lines.push(this.formatHint);
    const byReason = (title: string, entries: ReturnType<typeof linesJson>) => {
      if (Object.keys(entries).length > 0 && title) lines.push(title);
      for (const [reason, r] of Object.entries(entries)) {
        lines.push(`  ${reason}: ${r.count}`);
        for (const [file, numbers] of Object.entries(r.lines))
          lines.push(`    ${file}: lines ${numbers.join(', ')}${numbers.length === LINES_KEPT ? ', …' : ''}`);
      }
    };
    byReason('', json.rejected_by_reason);
    byReason('dropped by the service:', json.dropped_by_service_by_reason);
    for (const [form, count] of Object.entries(json.converted_timestamps)) lines.push(`timestamps converted from ${form.replace('_', ' ')}: ${count}`);
    for (const [event, count] of Object.entries(json.derived_events)) lines.push(`${event} events added: ${count}`);
    lines.push(`timestamps: ${json.timestamps.first ?? '-'} … ${json.timestamps.last ?? '-'}`);
    lines.push(`distinct ids: ${json.distinct_ids}   persons to create or update: ${json.persons_to_create_or_update}`);
    lines.push('events by name:');
    for (const [name, count] of Object.entries(json.events).slice(0, 50)) lines.push(`  ${count.toString().padStart(10)}  ${name}`);
    return lines.join('\n');
  }
}
