// Browser test helpers: Debian's Chromium driven by playwright-core (never a downloaded browser),
// the built site served from build/web by the page's own tiny server.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { ROOT, SITE, requireBuilt } from '../wasm/common.mjs';

const requireFromWeb = createRequire(join(ROOT, 'web', 'package.json'));
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic'];

export async function launch() {
  requireBuilt(CHROMIUM, 'install Debian\'s chromium (apt-get install chromium)');
  const { chromium } = requireFromWeb('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}

/**
 * A browser with a profile on disk (`dir`), not an incognito context: what an installed web app
 * needs (Chromium refuses to install one from an incognito profile). Resolves to its context.
 */
export async function launchProfile(dir) {
  requireBuilt(CHROMIUM, 'install Debian\'s chromium (apt-get install chromium)');
  const { chromium } = requireFromWeb('playwright-core');
  return chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, args: ARGS, headless: true });
}

/** Serves build/web on a free port; resolves to {url, server (the http.Server), close()}. */
export async function serveSite() {
  requireBuilt(join(SITE, 'index.html'), 'build the site with npm --prefix web run build');
  const { serve } = await import(pathToFileURL(join(ROOT, 'web', 'scripts', 'serve.mjs')).href);
  const server = await serve(SITE, 0);
  return {
    url: `http://127.0.0.1:${server.address().port}/`,
    server,
    close: () => new Promise((ok) => { server.closeAllConnections?.(); server.close(() => ok()); }),
  };
}
