// Accessibility, checked by axe-core (WCAG 2.1 A and AA rules) in Chromium: the default page in light
// and dark, at phone width, with an invalid plan on show, with pinned plans compared, and the
// ?embed=1 layout. Zero violations; each one found is listed with its elements.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';

import { PHONE, calculatorSettled, settle, suite, watch } from './helpers.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js', { paths: [new URL('../../web/', import.meta.url).pathname] });
// The page's Content-Security-Policy forbids injected scripts: axe is the test's, not the page's.
const fx = suite({ serviceWorkers: 'block', bypassCSP: true });
const DEFAULT = 'v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096';

async function violations(p) {
  await p.addScriptTag({ path: AXE });
  const found = await p.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.length}: ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')})`);
  });
  return found;
}

/** Waits until the plan search is not busy (its card is greyed meanwhile) and the page settled. */
async function quiet(p) {
  await settle(p);
  await p.waitForFunction(() => !document.querySelector('#search-card')?.classList.contains('busy'), null, { timeout: 20000 });
}

async function open(url, viewport) {
  const p = watch(await fx.context.newPage(), fx.problems);
  if (viewport) await p.setViewportSize(viewport);
  await p.goto(url);
  await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
  await settle(p);
  await quiet(p);
  return p;
}

describe('accessibility (axe-core)', () => {
  test('the default page, light and dark', async () => {
    const p = await open(`${fx.site.url}#${DEFAULT}`);
    assert.deepEqual(await violations(p), [], 'light');
    await p.emulateMedia({ colorScheme: 'dark' });
    assert.deepEqual(await violations(p), [], 'dark');
    await p.close();
  });

  test('phone width, an invalid plan, and two plans compared', async () => {
    const p = await open(`${fx.site.url}#${DEFAULT}`, PHONE);
    assert.deepEqual(await violations(p), [], 'phone');
    await p.click('#pin-plan');
    await p.fill('#f-tp', '3');
    await quiet(p);
    assert.deepEqual(await violations(p), [], 'invalid plan, one pinned');
    await p.fill('#f-tp', '4');
    await quiet(p);
    await p.waitForSelector('#compare table');
    assert.deepEqual(await violations(p), [], 'compared');
    await p.close();
  });

  test('the ?embed=1 layout', async () => {
    const p = watch(await fx.context.newPage(), fx.problems);
    await p.setViewportSize({ width: 400, height: 700 });
    await p.goto(`${fx.site.url}?embed=1#${DEFAULT}`);
    await calculatorSettled(p);
    assert.deepEqual(await violations(p), []);
    await p.close();
  });

  test('the example documentation page with its calculators (shadow DOM included)', async () => {
    const p = watch(await fx.context.newPage(), fx.problems);
    await p.goto(`${fx.site.url}examples/`);
    await p.waitForFunction(() => [...document.querySelectorAll('stepcast-calculator')].every((c) => c.dataset.state), null, { timeout: 30000 });
    assert.deepEqual(await violations(p), []);
    await p.close();
  });
});
