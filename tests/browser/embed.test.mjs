// The embed, in Chromium, on the example documentation page (web/examples/index.html, served at
// /examples/): two <stepcast-calculator>s render their own results (the CLI's numbers for their
// links), changing one leaves the other alone, both share one worker, "Open in Stepcast" carries
// the plan to the full page, styles neither leak in nor out, a bad scenario attribute shows a
// message and runs nothing, the iframe embed renders and is sized to its calculator (the frame
// posts its height), and the page works offline from the same bundle. Screenshots of the example
// page (desktop, phone) under build/screenshots/.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CLI, cliEstimate as cliEstimateFull, cliEstimateLink, jsonDiff, requireBuilt } from '../wasm/common.mjs';
import { launch, serveSite } from './browser.mjs';
import {
  DESKTOP, PHONE, SHOTS, assertCalculator, assertNothingInjected, calculatorSettled, calculatorShows, goOffline, metrics,
  settle, watch,
} from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');
// Only the numbers are compared: the CLI's report without the timeline.
const cliEstimate = (text) => cliEstimateFull(text, { timeline: false });

let site;
let browser;
let context;
let page;
const problems = [];

/** Waits until calculator `id` shows the estimate and the link of the plan in its controls. */
const calcSettled = (id, p = page) => calculatorSettled(p, `#${id}`);

async function calcNumbers(id, p = page) {
  return p.$$eval(`#${id} [data-metric]`, (els) => Object.fromEntries(els.map((e) => [e.dataset.metric, Number(e.dataset.value)])));
}

before(async () => {
  site = await serveSite();
  browser = await launch();
  context = await browser.newContext({ viewport: DESKTOP });
  // Counts the workers each document starts (the top one must start exactly one).
  await context.addInitScript(() => {
    const Real = window.Worker;
    window.__workers = 0;
    window.Worker = class extends Real {
      constructor(...args) {
        super(...args);
        window.__workers += 1;
      }
    };
  });
  page = watch(await context.newPage(), problems);
});

after(async () => {
  await browser?.close();
  await site?.close();
});

describe('the example page with embedded calculators', () => {
  test('renders both calculators, each with the CLI\'s numbers for its own scenario', async () => {
    await page.goto(`${site.url}examples/`);
    assert.match(await page.title(), /Training Llama 3 70B on 8 DGX H100/);
    for (const id of ['calc-70b', 'calc-8b']) {
      await calcSettled(id);
      const link = await page.getAttribute(`#${id}`, 'scenario');
      const cli = cliEstimateLink(link);
      assert.equal(cli.status, 0, cli.stderr);
      assertCalculator(cli.report, await calcNumbers(id), id);
      assert.equal(await page.locator(`#${id} .sc-status.error`).count(), 0);
    }
    // Each shows only its own controls.
    const controls = async (id) => page.$$eval(`#${id} [data-control]`, (els) => els.map((e) => e.dataset.control));
    assert.deepEqual(await controls('calc-70b'), ['tp', 'pp', 'micro_batch', 'recompute']);
    assert.deepEqual(await controls('calc-8b'), ['nodes', 'tp', 'micro_batch', 'precision']);
    // Each names the training software its estimate assumes (the links leave it to the default).
    for (const id of ['calc-70b', 'calc-8b'])
      assert.equal(await page.$eval(`#${id}`, (el) => el.shadowRoot.querySelector('.sc-software').textContent), '· Megatron-Core');
    assert.equal(await page.evaluate(() => window.__workers), 1, 'one worker for both calculators');
    // No part left out is written as text ("null" once stood above the controls).
    for (const id of ['calc-70b', 'calc-8b'])
      assert.doesNotMatch(await page.$eval(`#${id}`, (el) => el.shadowRoot.textContent), /null|undefined|\[object/);
  });

  test('changing one calculator does not change the other', async () => {
    const before8b = await calcNumbers('calc-8b');
    const before70b = await calcNumbers('calc-70b');
    await page.fill('#calc-70b [data-control="tp"]', '4');
    await page.selectOption('#calc-70b [data-control="recompute"]', 'full');
    await calcSettled('calc-70b');
    const after70b = await calcNumbers('calc-70b');
    assert.notEqual(after70b.iteration_time_s, before70b.iteration_time_s);
    const scenario = await page.$eval('#calc-70b', (el) => JSON.stringify(el.scenario));
    assert.equal(JSON.parse(scenario).plan.tp, 4);
    const cli = cliEstimate(scenario);
    assert.equal(cli.status, 0, cli.stderr);
    assertCalculator(cli.report, after70b, 'calc-70b after the change');
    assert.deepEqual(await calcNumbers('calc-8b'), before8b, 'the other calculator is unchanged');

    await page.selectOption('#calc-8b [data-control="precision"]', 'fp8');
    await calcSettled('calc-8b');
    assert.notDeepEqual(await calcNumbers('calc-8b'), before8b);
    assert.deepEqual(await calcNumbers('calc-70b'), after70b, 'and the other way round');
    const cli8b = cliEstimate(await page.$eval('#calc-8b', (el) => JSON.stringify(el.scenario)));
    assertCalculator(cli8b.report, await calcNumbers('calc-8b'), 'calc-8b after the change');

    // An invalid value: the engine's message inside that calculator only.
    await page.fill('#calc-8b [data-control="tp"]', '3');
    await page.waitForFunction(() => document.querySelector('#calc-8b').dataset.state === 'error');
    assert.match(await page.textContent('#calc-8b .sc-status'), /Invalid plan/);
    assert.equal(await page.getAttribute('#calc-8b [data-control="tp"]', 'aria-invalid'), 'true');
    assert.equal(await page.locator('#calc-70b .sc-status.error').count(), 0);
    await page.fill('#calc-8b [data-control="tp"]', '2');
    await calcSettled('calc-8b');
    assert.equal(await page.$eval('#calc-8b', (el) => el.dataset.state), 'ok');
  });

  test('"Open in Stepcast" opens the full page with the same plan', async () => {
    const href = await page.getAttribute('#calc-70b .sc-open', 'href');
    assert.ok(href.startsWith(`${site.url}#v=3&`), href);
    assert.equal(await page.getAttribute('#calc-70b .sc-open', 'target'), '_blank');
    const shown = await calcNumbers('calc-70b');
    const full = watch(await context.newPage(), problems);
    await full.goto(href);
    await full.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
    await settle(full);
    const m = await metrics(full);
    assert.deepEqual(jsonDiff({ iteration_time_s: shown.iteration_time_s, tokens_per_s: shown.tokens_per_s, mfu: shown.mfu },
      { iteration_time_s: m.iteration_time_s, tokens_per_s: m.tokens_per_s, mfu: m.mfu }), []);
    assert.equal(await full.inputValue('#f-tp'), '4');
    assert.equal(await full.inputValue('#f-recompute'), 'full');
    assert.equal(await full.inputValue('#f-tokens'), '1000', 'tokens to train carried');
    assert.equal(await full.inputValue('#f-price'), '2.5', 'price carried');
    await full.close();
  });

  test('styles do not leak in or out', async () => {
    const look = () => page.$eval('#calc-70b', (el) => {
      const r = el.shadowRoot;
      const props = ['color', 'fontFamily', 'fontSize', 'letterSpacing', 'lineHeight', 'borderTopWidth',
        'backgroundColor', 'paddingTop', 'textTransform'];
      const out = {};
      for (const sel of ['.sc', '.sc-title', '.sc-value', '.sc-controls', 'input', 'select', 'label', '.sc-open'])
        out[sel] = Object.fromEntries(props.map((k) => [k, getComputedStyle(r.querySelector(sel))[k]]));
      out.height = el.getBoundingClientRect().height;
      return out;
    });
    // The element's width is the document's to set (the layout inside follows it): fixed here.
    await page.$eval('#calc-70b', (el) => { el.style.width = '640px'; });
    const before = await look();
    assert.doesNotMatch(before['.sc-value'].fontFamily, /Georgia/, 'the document\'s font does not reach in');
    assert.notEqual(before['.sc-open'].color, 'rgb(122, 59, 0)', 'nor its link colour');
    // Out: the calculator's class names mean nothing to the document: a <p> with them looks like a <p>.
    const [probe, plain] = await page.evaluate(() => {
      const main = document.querySelector('main');
      const style = (cls) => {
        const p = document.createElement('p');
        p.className = cls;
        p.textContent = 'probe';
        main.append(p);
        const cs = getComputedStyle(p);
        const out = ['borderTopLeftRadius', 'borderTopWidth', 'backgroundColor', 'fontFamily', 'fontSize', 'color', 'padding']
          .map((k) => cs[k]);
        p.remove();
        return out;
      };
      return [style('sc sc-metric sc-value sc-status error stale'), style('')];
    });
    assert.deepEqual(probe, plain);
    // A hostile style sheet: element and class rules, !important, inherited properties, the root
    // font size, custom properties. Adopted by the document (the example page's policy blocks an
    // inline <style> a script adds; a site's own sheets apply the same way).
    await page.evaluate((css) => {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(css);
      document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    }, `
      html { font-size: 10px !important; --sc-text: red; --sc-bg: red; }
      body { color: red; font: italic 30px/3 fantasy; letter-spacing: 3px; text-transform: uppercase; }
      * { line-height: 3 !important; }
      div, span, label { border: 4px solid rgb(255, 0, 0) !important; color: rgb(255, 0, 0) !important; padding: 9px; }
      input, select { background: rgb(255, 0, 0) !important; }
      .sc, .sc-metric, .sc-value, .sc-title { font-size: 40px !important; color: red !important; }`);
    assert.equal(await page.$eval('body', (b) => getComputedStyle(b).letterSpacing), '3px', 'the sheet applies to the document');
    assert.deepEqual(await look(), before, 'the document\'s styles change nothing inside');
    await page.reload();
    await calcSettled('calc-70b');
  });

  test('a bad scenario attribute shows a message in its element and runs nothing', async () => {
    for (const [scenario, message] of [
      ['v=2&model=%3Cimg%20src%3Dx%20onerror%3Dwindow.__pwned%3D1%3E', /model preset “<img src=x onerror=window.__pwned=1>”, which does not exist/],
      ['v=2&tp=oops', /could not be read \(tp=oops is not a valid value\)/],
      ['', /could not be read/],
    ]) {
      await page.evaluate((s) => {
        const el = document.createElement('stepcast-calculator');
        el.id = 'calc-bad';
        el.setAttribute('scenario', s);
        document.querySelector('main').append(el);
      }, scenario);
      await page.waitForSelector('#calc-bad .sc-status.error');
      assert.match(await page.textContent('#calc-bad .sc-status'), message);
      await assertNothingInjected(page);
      await page.evaluate(() => document.querySelector('#calc-bad').remove());
    }
    await calcSettled('calc-70b');
  });

  test('the iframe embed renders results and links to the full page', async () => {
    await page.locator('#frame-70b').scrollIntoViewIfNeeded(); // loading="lazy"
    await page.waitForFunction(() => document.querySelector('#frame-70b').contentDocument?.querySelector('stepcast-calculator'));
    const frame = page.frames().find((f) => f.url().includes('embed=1'));
    assert.ok(frame, 'the iframe');
    await calculatorSettled(frame);
    const src = await page.getAttribute('#frame-70b', 'src');
    const cli = cliEstimateLink(src.slice(src.indexOf('#')));
    assert.equal(cli.status, 0, cli.stderr);
    const shown = await calculatorShows(frame);
    assertCalculator(cli.report, shown, 'the iframe');
    assert.deepEqual(shown.controls, ['tp', 'pp', 'micro_batch', 'recompute', 'distributed_optimizer']);
    assert.equal(await frame.isVisible('header.top'), false);
    assert.match(shown.open, /^http:\/\/127\.0\.0\.1:\d+\/#v=3&/);
  });

  test('the iframe posts its height and the page\'s snippet sizes it to the calculator', async () => {
    const frame = page.frames().find((f) => f.url().includes('embed=1'));
    // The frame's content height and the iframe's own, in CSS pixels.
    const heights = () => page.$eval('#frame-70b', (f) => [Math.ceil(f.contentDocument.querySelector('main').getBoundingClientRect().bottom), f.clientHeight]);
    const fitted = () => page.waitForFunction(() => {
      const f = document.querySelector('#frame-70b');
      return f.clientHeight === Math.ceil(f.contentDocument.querySelector('main').getBoundingClientRect().bottom);
    });
    await fitted();
    const [content, shown] = await heights();
    assert.equal(shown, content);
    assert.notEqual(shown, 300, 'not the page\'s own iframe height (its style sheet says 300px)');
    // An invalid value adds the engine's message: the calculator grows, and the iframe with it.
    await frame.fill('stepcast-calculator [data-control="tp"]', '3');
    await frame.waitForSelector('stepcast-calculator .sc-status.error');
    await fitted();
    const [grown] = await heights();
    assert.ok(grown > content, `taller with the message (${grown} px against ${content} px)`);
    await frame.fill('stepcast-calculator [data-control="tp"]', '8');
    await calculatorSettled(frame);
    await fitted();
    assert.deepEqual(await heights(), [content, content], 'and back');
  });

  test('screenshots: desktop and phone, nothing wider than the phone', async () => {
    const shoot = async (name) => {
      await page.evaluate(() => document.querySelector('#frame-70b').scrollIntoView());
      await calculatorSettled(page.frames().find((f) => f.url().includes('embed=1')));
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.waitForTimeout(100);
      await page.screenshot({ path: join(SHOTS, name), fullPage: true, timeout: 120000 });
    };
    await shoot('examples-desktop.png');
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(150);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `no sideways scrolling at phone width (${overflow}px)`);
    for (const id of ['calc-70b', 'calc-8b']) {
      const box = await page.locator(`#${id}`).boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width + 1, `${id} fits the phone's width`);
    }
    await shoot('examples-phone.png');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(100);
    await page.locator('#calc-70b').screenshot({ path: join(SHOTS, 'embed-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize(DESKTOP);
  });

  test('works offline from the same bundle (service worker)', async () => {
    await goOffline(page, site, context);
    await page.reload();
    await calcSettled('calc-70b');
    await calcSettled('calc-8b');
    assert.equal(await page.$eval('#calc-70b', (el) => el.dataset.state), 'ok');
    await context.setOffline(false);
  });

  test('no console errors, no dialogs', () => {
    assert.deepEqual(problems, []);
  });
});
