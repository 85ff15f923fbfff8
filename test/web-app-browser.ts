// What the web app's browser tests share: generated data sent and waited for, a Chromium page that
// records console errors, the first password set through the start banner's link, axe-core.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, waitFor, type Chromium, type SdkTarget } from '@sightline/testkit';

/** Screenshots of every page (git-ignored). */
export const WEB_APP_OUTPUT_DIR = join(__dirname, '..', 'test-output', 'web-app');
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

declare const window: any;
declare const document: any;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Sends events through /batch/ and waits until the events list shows every one. */
export async function sendBatch(target: SdkTarget, batch: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(`${target.base}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: target.projectKey, batch }),
  });
  expect(res.status).toBe(200);
  await waitFor(
    async () => {
      const list = await target.api('GET', '/api/environments/1/events/?limit=100');
      return list.status === 200 && list.body.results.length === batch.length;
    },
    { timeoutMs: 30_000, intervalMs: 250, description: 'the generated events listed' },
  );
}

/** A 1280 × 860 page whose console errors and uncaught exceptions land in `consoleErrors`. */
export async function openPage(): Promise<{ browser: Chromium; page: Page; consoleErrors: string[] }> {
  const browser = await launchChromium();
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1280, height: 860 });
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(String(error)));
  return { browser, page, consoleErrors };
}

/** The first-start link the service's banner printed (localhost there; the browser uses 127.0.0.1, the same port). */
export function setupLink(target: SdkTarget): string | undefined {
  return /(http:\/\/localhost:\d+\/setup\?token=[A-Za-z0-9_-]+)/.exec(target.output())?.[1]?.replace('http://localhost:', 'http://127.0.0.1:');
}

/** axe-core's serious and critical findings on the page (evaluated through the DevTools protocol, which the page's CSP does not govern). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(`${AXE_SOURCE}\n;undefined`);
  const result = (await page.evaluate(() => window.axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'best-practice'] }))) as { violations: AxeViolation[] };
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
