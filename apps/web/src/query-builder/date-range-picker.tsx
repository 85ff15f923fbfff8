import { useState } from 'preact/hooks';
import { customRangeInterval, DATE_RANGES, describeRange, presetOf, rangeKey } from './date-ranges';

export interface DateRange {
  date_from: string;
  date_to?: string;
  /** The interval PostHog picks for the range. */
  interval: 'hour' | 'day' | 'week' | 'month';
}

const CUSTOM = 'custom';
const isDay = (value: string | undefined) => !!value && /^\d{4}-\d{2}-\d{2}$/.test(value);

/**
 * PostHog's presets, a custom from–to pair of days, and any other range the query holds (a saved
 * `-45d`, `2024-01-01`) as an option of its own, so the select always names the range asked.
 */
export function DateRangePicker({ dateFrom, dateTo, onChange }: { dateFrom: string; dateTo?: string; onChange: (range: DateRange) => void }) {
  const current = rangeKey(dateFrom, dateTo);
  const [choosing, setChoosing] = useState(false);
  const [from, setFrom] = useState(isDay(dateFrom) ? dateFrom : '');
  const [to, setTo] = useState(isDay(dateTo) ? dateTo! : '');
  const custom = choosing || (!presetOf(dateFrom, dateTo) && isDay(dateFrom));
  const apply = (event: Event) => {
    event.preventDefault();
    if (!from) return;
    setChoosing(false);
    onChange({ date_from: from, date_to: to || undefined, interval: customRangeInterval(from, to || undefined) });
  };
  return (
    <>
      <label>
        Date range
        <select
          name="date_range"
          value={choosing ? CUSTOM : current}
          onChange={(e) => {
            const value = e.currentTarget.value;
            if (value === CUSTOM) return setChoosing(true);
            setChoosing(false);
            const preset = DATE_RANGES.find((r) => rangeKey(r.date_from, r.date_to) === value);
            if (preset) onChange({ date_from: preset.date_from, date_to: preset.date_to, interval: preset.interval });
          }}
        >
          {presetOf(dateFrom, dateTo) ? null : <option value={current}>{describeRange(dateFrom, dateTo)}</option>}
          {DATE_RANGES.map((range) => (
            <option key={range.label} value={rangeKey(range.date_from, range.date_to)}>
              {range.label}
            </option>
          ))}
          <option value={CUSTOM}>Custom dates…</option>
        </select>
      </label>
      {custom ? (
        <span class="custom-range" role="group" aria-label="Custom date range">
          <label>
            From
            <input type="date" name="custom_from" required value={from} max={to || undefined} onInput={(e) => setFrom(e.currentTarget.value)} />
          </label>
          <label>
            To
            <input type="date" name="custom_to" value={to} min={from || undefined} onInput={(e) => setTo(e.currentTarget.value)} />
          </label>
          <button type="button" class="secondary" onClick={apply} disabled={!from}>
            Apply dates
          </button>
        </span>
      ) : null}
    </>
  );
}
