/** What the run knows at one moment, for the progress display. */
export interface ProgressState {
  /** Events the run will send, when known beforehand (--limit). */
  totalEvents: number | null;
  /** Bytes of the files (null for standard input). */
  totalBytes: number | null;
  bytesRead: number;
  /** Valid events read so far. */
  eventsRead: number;
  /** Events the service has acknowledged. */
  eventsSent: number;
  elapsedMs: number;
}

export interface ProgressEstimate {
  /** 0–100, or null when nothing tells how far the run is. */
  percent: number | null;
  /** Seconds left at the rate events have been sent, or null before one is known. */
  etaSeconds: number | null;
}

/**
 * How far an import is, and how long it has left. With a known number of events (--limit) both
 * come from events sent. Otherwise the files' size gives the share read, and the events they
 * hold are estimated from the events read per byte so far; the time left is always the events
 * still to send at the rate they were sent. (Bytes alone would run ahead of what the service has
 * taken: reading is buffered, and waits for 429s or outages move no bytes.)
 */
export function estimateProgress(state: ProgressState): ProgressEstimate {
  const { totalEvents, totalBytes, bytesRead, eventsRead, eventsSent, elapsedMs } = state;
  let expectedEvents: number | null = totalEvents;
  let percent: number | null = null;
  if (totalEvents !== null && totalEvents > 0) percent = (100 * eventsSent) / totalEvents;
  else if (totalBytes !== null && totalBytes > 0) {
    percent = (100 * Math.min(bytesRead, totalBytes)) / totalBytes;
    if (bytesRead > 0 && eventsRead > 0) expectedEvents = (eventsRead * totalBytes) / Math.min(bytesRead, totalBytes);
  }
  let etaSeconds: number | null = null;
  if (expectedEvents !== null && eventsSent > 0 && elapsedMs > 0) {
    const rate = eventsSent / (elapsedMs / 1000);
    etaSeconds = Math.max(0, (expectedEvents - eventsSent) / rate);
  }
  return { percent: percent === null ? null : Math.min(100, percent), etaSeconds };
}

/** 75 s → "1m15s". */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
