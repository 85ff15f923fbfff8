import { estimateProgress, formatDuration } from './progress-estimate';

const base = { totalEvents: null, totalBytes: null, bytesRead: 0, eventsRead: 0, eventsSent: 0, elapsedMs: 10_000 };

describe('import progress', () => {
  it('counts events when their number is known, with the time left at the rate they were sent', () => {
    expect(estimateProgress({ ...base, totalEvents: 1000, eventsSent: 250 })).toEqual({ percent: 25, etaSeconds: 30 });
  });

  it('else the share of bytes read, and the time left from the events sent, not the bytes read', () => {
    // Half the file read (reading runs ahead), a quarter of its events sent in 10 s.
    const estimate = estimateProgress({ ...base, totalBytes: 1_000_000, bytesRead: 500_000, eventsRead: 5_000, eventsSent: 2_500 });
    expect(estimate.percent).toBe(50);
    // 10,000 events expected, 7,500 left at 250/s.
    expect(estimate.etaSeconds).toBe(30);
  });

  it('knows neither before anything was sent or without a size', () => {
    expect(estimateProgress(base)).toEqual({ percent: null, etaSeconds: null });
    expect(estimateProgress({ ...base, totalBytes: 100, bytesRead: 10, eventsRead: 3 })).toEqual({ percent: 10, etaSeconds: null });
    expect(formatDuration(null)).toBe('?');
    expect(formatDuration(75)).toBe('1m15s');
  });
});
