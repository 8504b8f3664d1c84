// Debian's Chromium (/usr/bin/chromium, or RHO_CHROMIUM) for the dashboard's browser tests, driven
// by playwright-core, which never downloads a browser. Missing, the tests are skipped, except in CI
// (CI=true), where that is a failure. Screenshots go to artifacts/dashboard/ (gitignored; CI keeps them).
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';

export const CHROMIUM = process.env.RHO_CHROMIUM ?? '/usr/bin/chromium';
/** Whether Chromium is there (a describe's `skipIf(!chromiumAvailable)`). */
export const chromiumAvailable = existsSync(CHROMIUM);
if (!chromiumAvailable && process.env.CI === 'true')
  throw new Error(`Chromium is not installed at ${CHROMIUM}; CI must install the Debian package chromium.`);

/** Where screenshots go (made on first use). */
export const shots = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'artifacts', 'dashboard');

/** A headless Chromium that reaches nothing but what a test opens. */
export async function launchChromium(): Promise<Browser> {
  mkdirSync(shots, { recursive: true });
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-background-networking'],
  });
}
