/**
 * The "YYYY-MM-DD HH:MM:SS" part of the last second formatted: the worker formats two or three
 * timestamps per event, and the events of a batch mostly fall in the same seconds.
 */
let lastSecond = Number.NaN;
let lastSecondText = '';

/** `YYYY-MM-DD HH:MM:SS.ffffff` in UTC: the DateTime64(6, 'UTC') text form ClickHouse parses fastest. */
export function toClickHouseDateTime(epochMs: number): string {
  const second = Math.floor(epochMs / 1000);
  if (second !== lastSecond) {
    const iso = new Date(second * 1000).toISOString(); // 2024-01-01T00:00:00.000Z
    lastSecondText = `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
    lastSecond = second;
  }
  const ms = Math.floor(epochMs - second * 1000);
  return `${lastSecondText}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}000`;
}
