import { useEffect, useState } from 'preact/hooks';

/**
 * The order a page's requests start in. Trends, Funnels and a dashboard hold the lists their
 * pickers and forms read (definitions, actions, group types, dashboards) until their own result
 * is drawn: every request queues on the same engines (one embedded ClickHouse session, one
 * embedded PostgreSQL), so whatever starts beside the page's query delays its first chart.
 * A request made while no page holds them starts at once.
 */
let holds = 0;
let waiting: (() => void)[] = [];

function release(): void {
  holds = Math.max(0, holds - 1);
  if (holds > 0) return;
  const ready = waiting;
  waiting = [];
  for (const start of ready) start();
}

/** Starts `load` once no page holds its secondary requests (at once when none does). */
export function afterFirstResult<T>(load: () => Promise<T>): Promise<T> {
  if (holds === 0) return load();
  return new Promise<void>((resolve) => waiting.push(resolve)).then(load);
}

/**
 * Holds the secondary requests from this render on until `settled` (the page's first result
 * drawn, or its error shown) or the page goes. Called first in the page, so the hold is in place
 * before any effect of this render (its children's run before its own) asks for a list.
 */
export function useHoldUntilFirstResult(settled: boolean): void {
  const [hold] = useState(() => {
    holds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      release();
    };
  });
  // Effects run after the browser has painted the render that showed the result.
  useEffect(() => {
    if (settled) hold();
  }, [settled]);
  useEffect(() => hold, []);
}
