import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's `chromium` package (scripts/test.sh installs it); playwright never downloads a browser here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * A desktop Chrome user agent. posthog-js drops every event from a browser whose user agent
 * names it headless (its bot filter), so the tests present an ordinary one.
 */
export const DESKTOP_CHROME_USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';

export interface Chromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile, as an ordinary visitor's browser looks to a page:
 * a normal user agent and `navigator.webdriver` false (posthog-js also ignores browsers that
 * announce automation). No network features of its own (sync, component updates, QUIC), so every
 * request a test sees comes from the page.
 */
export async function launchChromium(): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'sightline-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    userAgent: DESKTOP_CHROME_USER_AGENT,
    ignoreDefaultArgs: ['--enable-automation'],
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-blink-features=AutomationControlled',
      // Also on the command line: playwright's own override (userAgent above) is not in force
      // while a page unloads, so posthog-js would see "HeadlessChrome" in its pagehide handler
      // and drop $pageleave as a bot's event.
      `--user-agent=${DESKTOP_CHROME_USER_AGENT}`,
    ],
  });
  await context.addInitScript({ content: "Object.defineProperty(Navigator.prototype, 'webdriver', { get: () => false, configurable: true });" });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
