import { formatTime } from '../format';

/**
 * When the result shown was computed (the server's `last_refresh`; a cached answer is as old as
 * that), and a button that computes it again (`refresh: true`).
 */
export function ComputedAt({
  lastRefresh,
  isCached,
  timezone,
  onRefresh,
  refreshing,
}: {
  lastRefresh: string | null | undefined;
  isCached?: boolean;
  timezone: string;
  onRefresh: () => void;
  refreshing: boolean;
}) {
  return (
    <p class="computed-at hint" data-testid="computed-at" data-last-refresh={lastRefresh ?? ''}>
      <span role="status" aria-live="polite">
        {refreshing
          ? 'Computing again…'
          : lastRefresh
            ? `Computed ${formatTime(lastRefresh, timezone)}${isCached ? ' (from the cache)' : ''}`
            : 'Not computed yet'}
      </span>{' '}
      <button type="button" class="secondary" onClick={onRefresh} disabled={refreshing}>
        Refresh
      </button>
    </p>
  );
}
