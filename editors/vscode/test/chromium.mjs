// Headless Debian chromium for the browser tests. The machine's network is closed: without these
// flags Chromium waits on refused connections (updates, sync, QUIC) and hangs.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

export const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(scratch, { width = 1280, height = 800 } = {}) {
  return puppeteer.launch({
    executablePath: chromiumPath,
    headless: true,
    userDataDir: mkdtempSync(join(scratch, 'chromium-profile-')),
    defaultViewport: { width, height },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}
