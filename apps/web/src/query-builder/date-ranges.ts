/** The relative date ranges the builders offer (PostHog's `date_from` values). */
export const DATE_RANGES = [
  { value: '-24h', label: 'Last 24 hours' },
  { value: '-7d', label: 'Last 7 days' },
  { value: '-14d', label: 'Last 14 days' },
  { value: '-30d', label: 'Last 30 days' },
  { value: '-90d', label: 'Last 90 days' },
];
