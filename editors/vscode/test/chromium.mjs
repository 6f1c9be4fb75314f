// Headless Debian chromium for the browser tests. The machine's network is closed: without these
// flags Chromium waits on refused connections (updates, sync, QUIC) and hangs.
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

export const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

export function launchChromium(scratch, { width = 1280, height = 800 } = {}) {
  // Its own HOME too: Chromium keeps crash reports and settings under ~ whatever the profile.
  const home = mkdtempSync(join(scratch, 'home-'));
  return puppeteer.launch({
    executablePath: chromiumPath,
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache') },
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
