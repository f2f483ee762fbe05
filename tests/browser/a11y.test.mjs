// Accessibility, checked by axe-core (WCAG 2.1 A and AA rules) in Chromium: the default page in light
// and dark, at phone width, with an invalid plan on show, with pinned plans compared, the
// ?embed=1 layout, and the states issue 37's user tasks reach (a cut link's notice, an imported
// config, a MoE preset's recipe, a split offered as a button, out of memory with its fixes, the
// deadline sweep, the scaling chart, the traffic card, refused calibration and dropped files).
// Zero violations; each one found is listed with its elements. In those states no text reads
// "null" or "undefined" (a value the page failed to word).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ROOT } from '../wasm/common.mjs';
import { PHONE, calculatorSettled, openAnswered, settle, suite, watch } from './helpers.mjs';

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

  test('the states the user tasks of issue 37 reach, light and dark', async () => {
    const fixture = (...path) => readFileSync(join(ROOT, 'tests', ...path), 'utf8');
    const check = async (p, what) => {
      // No value the page failed to word ("…before estimatingnull", issue 37 item 12).
      assert.doesNotMatch(await p.evaluate(() => document.body.innerText), /null|undefined|\[object /, `${what}: the text`);
      await p.emulateMedia({ colorScheme: 'light' });
      assert.deepEqual(await violations(p), [], `${what}, light`);
      await p.emulateMedia({ colorScheme: 'dark' });
      assert.deepEqual(await violations(p), [], `${what}, dark`);
      await p.emulateMedia({ colorScheme: 'light' });
    };

    // A link cut after gbs=512 (format 3 ends with &end): its notice over the default plan.
    const cut = await open(`${fx.site.url}#v=3&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512`);
    assert.match(await cut.textContent('#link-status'), /^This link is incomplete/);
    await check(cut, 'a cut link');
    await cut.close();

    const p = await open(`${fx.site.url}#${DEFAULT}`);
    // A MoE preset picked: its recipe's plan, said with a way back.
    await p.fill('#f-model-search', 'qwen3-30b');
    await p.selectOption('#f-model', 'qwen3-30b-a3b');
    await quiet(p);
    assert.match(await p.textContent('#model-recipe'), /^Plan from/);
    await check(p, 'a MoE preset\'s recipe');
    // An imported config.json: its verdict, and what the link leaves out.
    await p.fill('#import-text', fixture('fixtures', 'hf-config', 'mixtral-8x7b-v0.1.json'));
    await p.click('#import-go');
    await p.waitForSelector('#import-status:not([hidden]):not(.busy)');
    await quiet(p);
    assert.match(await p.textContent('#import-status'), /^Imported/);
    await check(p, 'an imported config');
    // nccl-tests of another GPU, refused; a dropped file too large to read, refused.
    await p.fill('#cal-nccl', fixture('engine', 'fixtures', 'nccl-tests', 'reduce_scatter_perf-a100-old-format.txt'));
    await p.click('#cal-nccl-fit');
    await p.waitForFunction(() => document.querySelector('#cal-status').classList.contains('error'));
    await p.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File([new Uint8Array(3 * 2 ** 20)], 'checkpoint.bin'));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await p.waitForSelector('#drop-status:not([hidden])');
    await check(p, 'refused calibration and a refused drop');
    await p.close();

    // The deadline sweep's table, the scaling chart and the traffic card, each drawn.
    const q = await open(`${fx.site.url}#v=2&model=llama3-8b&node=dgx-h100&nodes=1&tp=1&pp=1&mb=1&gbs=512&seq=8192`);
    await q.fill('#f-days', '30');
    await q.click('#deadline-go');
    await q.waitForSelector('.deadline-table tbody tr', { timeout: 30000 });
    await q.$eval('#scaling-card', (el) => el.scrollIntoView());
    await q.waitForFunction(() => typeof window.__stepcast.scaling === 'number' && document.querySelector('.scaling-table'), null, { timeout: 30000 });
    await q.$eval('#traffic-card', (el) => el.scrollIntoView());
    await q.waitForFunction(() => window.__stepcast.traffic?.scenario === window.__stepcast.rendered, null, { timeout: 30000 });
    await check(q, 'the deadline table, the scaling chart and the traffic card');
    await q.close();

    // A split the engine offers as a button (DeepSeek-V3's 61 layers at PP 8), and out of memory
    // with the changes that make it fit.
    const split = await openAnswered(fx, `${fx.site.url}#v=2&model=deepseek-v3&node=dgx-h100&nodes=32&tp=2&pp=8&ep=8&etp=1&gbs=1024&rc=full`);
    await quiet(split);
    await split.waitForSelector('[data-path="plan.pp"] .fix button.fix-apply');
    await check(split, 'a split offered as a button');
    await split.close();
    const oom = await open(`${fx.site.url}#v=2&model=llama3-8b&node=dgx-h100&nodes=1&tp=1&pp=1&mb=2&gbs=64&seq=8192&rc=none`);
    await oom.waitForSelector('#fit-fixes button');
    await check(oom, 'out of memory with its fixes');
    await oom.close();
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
