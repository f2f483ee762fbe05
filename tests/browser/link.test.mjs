// Share by URL, in Chromium: the scenario lives in the address; "Copy link" gives it; a fresh page
// opened with it shows the same inputs and the same estimate; links written by the CLI open the
// same plan, and the page's links give the CLI the same iteration time; old links (fixtures) keep
// opening; malformed, oversized, script-bearing links and links naming presets that do not exist
// show a message, run nothing and leave the default scenario, usable. Also the iframe mode
// (?embed=1). Screenshots under build/screenshots/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  CLI, SCENARIO_DIR, cliEstimate as cliEstimateFull, cliEstimateLink, cliLink, exampleScenarios, jsonDiff, linkFixtures, requireBuilt,
} from '../wasm/common.mjs';
import { launch, serveSite } from './browser.mjs';
import {
  CALCULATOR, DESKTOP, SHOTS, assertCalculator, assertNothingInjected, assertNumbers, calculatorSettled, calculatorShows, formState,
  linked, metrics, pageScenario, settle, watch,
} from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');
// Only the numbers are compared: the CLI's report without the timeline.
const cliEstimate = (text) => cliEstimateFull(text, { timeline: false });

const DEFAULT = readFileSync(join(SCENARIO_DIR, 'llama3-70b_dgx-h100x8.json'), 'utf8');
let site;
let browser;
let context;
const problems = [];
let defaultNumbers;

async function open(url, { viewport = DESKTOP } = {}) {
  const p = watch(await context.newPage(), problems);
  await p.setViewportSize(viewport);
  await go(p, url);
  return p;
}

/**
 * Opens `url` in page `p` and waits for its estimate: a full load the first time, then (the same
 * page with another fragment) the page's own hashchange path, as when a link is pasted.
 */
async function go(p, url) {
  const before = await p.evaluate(() => [performance.timeOrigin, window.__stepcast?.opens ?? 0]);
  await p.goto(url);
  await p.waitForFunction(([origin, opens]) => {
    const n = window.__stepcast?.opens ?? 0;
    return performance.timeOrigin !== origin ? n >= 1 : n > opens;
  }, before, { timeout: 20000 });
  await settle(p);
}

before(async () => {
  site = await serveSite();
  browser = await launch();
  context = await browser.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.url.replace(/\/$/, '') });
  const cli = cliEstimate(DEFAULT);
  assert.equal(cli.status, 0, cli.stderr);
  defaultNumbers = cli.report;
});

after(async () => {
  await browser?.close();
  await site?.close();
});

describe('share by URL', () => {
  test('Copy link, then the link in a fresh page: the same inputs and estimate, one history entry for a burst of typing', async () => {
    const p = await open(site.url);
    const first = await linked(p);
    assert.match(first, /#v=3&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&.*&end$/, 'the default scenario, in the address');
    const historyLength = await p.evaluate(() => history.length);
    await p.evaluate(() => {
      window.__replaced = 0;
      for (const name of ['replaceState', 'pushState']) {
        const real = history[name].bind(history);
        history[name] = (...a) => { window.__replaced += 1; return real(...a); };
      }
    });
    // Fast typing: 20 changes in a row write the address a few times, not 20: at most once per
    // 0.4 s (and the burst's first write at once), however long a slow machine takes to type.
    const t0 = Date.now();
    for (let i = 0; i < 20; i++) await p.fill('#f-micro_batch', String(2 - (i % 2)));
    await p.fill('#f-tp', '4');
    await p.selectOption('#f-model', 'llama2-70b');
    await p.fill('#f-nodes', '16');
    await p.uncheck('#f-distributed_optimizer');
    await p.selectOption('#f-recompute', 'full');
    await p.fill('#f-tokens', '2500');
    await p.fill('#f-price', '3.1');
    // The tokens and the price change the link, not the scenario: linked() alone could take the
    // link of the same scenario written before them. Wait for the link that has the price first.
    await p.waitForFunction(() => window.__stepcast.link?.endsWith('&price=3.1&end'), null, { timeout: 15000 });
    const link = await linked(p);
    const replaced = await p.evaluate(() => window.__replaced);
    const ms = Date.now() - t0;
    assert.ok(replaced >= 1 && replaced <= Math.ceil(ms / 400) + 1 && replaced < 26,
      `the address was written ${replaced} times for 26 changes in ${ms} ms`);
    // One entry: the plan before the burst stays a back-button press away (firstuse.test.mjs).
    assert.equal(await p.evaluate(() => history.length), historyLength + 1, 'one history entry for the burst');
    assert.match(link, /model=llama2-70b&node=dgx-h100&nodes=16&tp=4&pp=4&gbs=512&sp=1&rc=full/);
    assert.match(link, /&tokens=2500000000000&price=3.1&end$/);

    await p.click('#copy-link');
    await p.waitForFunction(() => document.querySelector('#copy-link').textContent === 'Link copied');
    assert.equal(await p.evaluate(() => navigator.clipboard.readText()), link, 'the clipboard holds the link');
    assert.equal(await p.getAttribute('#copy-link', 'data-link'), link);

    const inputs = await formState(p);
    const shown = await metrics(p);
    const cost = await p.$$eval('#cost-out [data-metric]', (els) => els.map((e) => Number(e.dataset.value)));
    const fresh = await browser.newContext({ viewport: DESKTOP });
    const q = watch(await fresh.newPage(), problems);
    await q.goto(link);
    await q.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
    await settle(q);
    assert.deepEqual(await formState(q), inputs, 'the same inputs');
    assert.deepEqual(jsonDiff(shown, await metrics(q), { rel: 0, abs: 0 }), [], 'the same estimate');
    assert.deepEqual(await q.$$eval('#cost-out [data-metric]', (els) => els.map((e) => Number(e.dataset.value))), cost);
    assert.equal(await q.evaluate(() => window.__stepcast.opened), 'link');
    assert.equal(await linked(q), link, 'the opened page keeps the link as it is');
    await fresh.close();

    // The page's link, given to the CLI, gives the page's iteration time.
    const cli = cliEstimateLink(link);
    assert.equal(cli.status, 0, cli.stderr);
    assertNumbers(cli.report, shown);
    await p.close();
  });

  test('page links give `stepcast estimate --link` the page\'s iteration time (custom model, GPU, links)', async () => {
    const p = await open(site.url);
    const check = async (what) => {
      const link = await linked(p);
      const cli = cliEstimateLink(link);
      assert.equal(cli.status, 0, `${what}: ${cli.stderr}`);
      const shown = await metrics(p);
      assert.deepEqual(jsonDiff(cli.report.iteration_time_s, shown.iteration_time_s), [], `${what}: iteration time`);
      assertNumbers(cli.report, shown, `${what}: headline numbers`);
    };
    await check('default');
    await p.check('#f-model-mode-custom');
    await p.fill('#f-m-layers', '40');
    await settle(p);
    await check('custom model');
    await p.check('#f-cluster-mode-custom');
    await p.selectOption('#f-gpu', '__custom__');
    await p.fill('#f-g-memory_gib', '96');
    await p.fill('#f-g-peak-bf16', '1200');
    await p.fill('#f-g-name', 'a GPU & <friends>');
    await settle(p);
    await check('custom GPU');
    // A custom link object (only from a link or a file) survives the round trip through the form.
    const withLinks = JSON.parse(linkFixtures('links-v0.txt').map((l) => decodeURIComponent(l.slice(1)))
      .find((t) => t.includes('custom fabric')));
    const url = cliLink(JSON.stringify(withLinks), { base: site.url });
    assert.equal(url.status, 0, url.stderr);
    const q = await open(url.link);
    assert.match(await q.$eval('#f-intra_node_link', (s) => s.selectedOptions[0].textContent), /custom fabric/);
    const link = await linked(q);
    const cli = cliEstimateLink(link);
    assert.equal(cli.status, 0, cli.stderr);
    assertNumbers(cliEstimate(JSON.stringify(withLinks)).report, await metrics(q), 'custom links');
    assertNumbers(cli.report, await metrics(q), 'custom links, the page\'s link');
    await q.close();
    await p.close();
  });

  test('links written by `stepcast link` open the same plan, tokens and price', async () => {
    const p = watch(await context.newPage(), problems);
    for (const [file, text] of exampleScenarios()) {
      const made = cliLink(text, { base: site.url, tokens: 5e11, price: 1.75 });
      assert.equal(made.status, 0, made.stderr);
      await go(p, made.link);
      assert.equal(await p.evaluate(() => window.__stepcast.opened), 'link', file);
      assertNumbers(cliEstimate(text).report, await metrics(p), file);
      assert.equal(await p.inputValue('#f-tokens'), '500');
      assert.equal(await p.inputValue('#f-price'), '1.75');
      // What the page sends is the same plan.
      assertNumbers(cliEstimate(JSON.stringify(await pageScenario(p))).report, await metrics(p), `${file}, as sent`);
    }
    await p.close();
  });

  // Issue 38 §2: typing 10,000,000 billion tokens (10^16) wrote "tokens=1e+16", whose '+' a
  // fragment reads as a space, and the reload showed the default scenario; tokens past what the
  // reader takes (10^21) left the address without its plan. Now 10^16 is written "1e16" and
  // reloads to the same plan and tokens, and 2·10^21 is left out of the link, said beside the
  // cost form, the plan kept.
  test('tokens of 10^16 reload the same plan and tokens; past 10^21 the link keeps the plan and says why it leaves them out', async () => {
    const p = await open(site.url);
    await p.fill('#f-tp', '4');
    await p.fill('#f-tokens', '10000000');
    await p.waitForFunction(() => window.__stepcast.link?.includes('&tokens=1e16&'), null, { timeout: 15000 });
    const link = await linked(p);
    assert.doesNotMatch(link, /[+ ]/, 'no sign a fragment reads as a space');
    const shown = await metrics(p);
    assert.equal(await p.isHidden('#cost-link'), true, 'nothing to say');
    await p.reload();
    await p.waitForFunction(() => window.__stepcast?.opened, null, { timeout: 20000 });
    await settle(p);
    assert.equal(await p.evaluate(() => window.__stepcast.opened), 'link', 'the link opens after a reload');
    assert.equal(await p.inputValue('#f-tokens'), '10000000');
    assert.equal(await p.inputValue('#f-tp'), '4');
    assert.deepEqual(await metrics(p), shown, 'the same estimate');
    assert.match(await p.textContent('#cost-out [data-metric="train_time_s"]'), /\d/, 'the time to train 10^16 tokens');

    // 2·10^21 tokens: past the reader's 10^21. The link is the plan without them, and the page says so.
    await p.fill('#f-tokens', '2000000000000');
    await p.waitForFunction(() => !document.querySelector('#cost-link').hidden, null, { timeout: 15000 });
    assert.equal(await p.textContent('#cost-link'),
      'The link leaves out the tokens to train (tokens=2e+21 must be between 0 and 1e+21); it keeps the plan.');
    const kept = await linked(p);
    assert.doesNotMatch(kept, /tokens=/, 'no tokens in the link');
    assert.match(kept, /&tp=4&.*&end$/, 'the plan in the link');
    assert.equal(await p.getAttribute('#copy-link', 'data-link'), kept);
    assert.equal(await p.isDisabled('#copy-link'), false);
    await p.reload();
    await p.waitForFunction(() => window.__stepcast?.opened, null, { timeout: 20000 });
    await settle(p);
    assert.equal(await p.evaluate(() => window.__stepcast.opened), 'link', 'the plan reopens');
    assert.equal(await p.inputValue('#f-tp'), '4');
    assert.deepEqual(await metrics(p), shown, 'the plan intact');
    assert.equal(await p.isHidden('#cost-link'), true, 'tokens within range again: nothing to say');
    await p.close();
  });

  // Old links open with the flags they leave out at the old fixed defaults (tests/wasm/link.test.mjs
  // checks what the engine reads them to): the page shows what `stepcast estimate --link` gives.
  test('old links keep opening: format 0 and format 1 fixtures', async () => {
    const p = watch(await context.newPage(), problems);
    for (const fixture of ['links-v0.txt', 'links-v1.txt']) {
      for (const link of linkFixtures(fixture)) {
        const want = cliEstimateLink(link).report;
        assert.ok(want, `the CLI opens ${link.slice(0, 60)}`);
        await go(p, site.url + link);
        assert.equal(await p.evaluate(() => window.__stepcast.opened), 'link', `${fixture}: ${link.slice(0, 60)}`);
        assertNumbers(want, await metrics(p), `${fixture}: ${link.slice(0, 60)}`);
        assert.match(await linked(p), /#v=3&.*&end$/, 'rewritten in the current format');
      }
    }
    await p.close();
  });

  const bad = [
    ['script in a preset name', '#v=2&model=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E',
      /names the model preset “<img src=x onerror=alert\(1\)>”, which does not exist/],
    ['script in format 0', `#${encodeURIComponent('{"model":"llama3-8b","cluster":{"node":"<svg onload=window.__pwned=1>","nodes":1},"plan":{}}')}`,
      /names the node preset “<svg onload=window.__pwned=1>”/],
    ['an unknown preset', '#v=2&model=llama9-1t&node=dgx-h100&nodes=8&gbs=512', /model preset “llama9-1t”, which does not exist/],
    ['malformed', '#v=2&model=llama3-8b&tp=abc', /could not be read \(tp=abc is not a valid value\)/],
    ['not key=value', '#%3Cscript%3Ewindow.__pwned%3D1%3C%2Fscript%3E', /could not be read \(.*is not key=value\)/],
    ['a newer format', '#v=7&model=llama3-8b', /format version 7 is not one this Stepcast reads/],
    ['oversized', `#v=2&model=llama3-8b&name=${'A'.repeat(10000)}`, /links over 8192 are refused/],
  ];
  test('bad links: a message, nothing run or injected, the default scenario (or the plan on show), usable', async () => {
    const p = watch(await context.newPage(), problems);
    for (const [i, [what, fragment, message]] of bad.entries()) {
      const before = i === 0 ? null : { numbers: await metrics(p), address: await linked(p) };
      await go(p, site.url + fragment);
      const note = p.locator('#link-status');
      assert.equal(await note.isVisible(), true, `${what}: a message`);
      assert.match(await note.textContent(), message, what);
      // The first opens the page: the default scenario; the others change only the fragment of
      // the open page, which keeps the plan it shows, and its link.
      if (i === 0) {
        assert.match(await note.textContent(), /Showing the default scenario/, what);
        assertNumbers(defaultNumbers, await metrics(p), `${what}: the default scenario`);
        assert.match(await linked(p), /#v=3&model=llama3-70b&/, `${what}: the address now holds what is shown`);
      } else {
        assert.match(await note.textContent(), /The plan on show is unchanged/, what);
        assert.deepEqual(await metrics(p), before.numbers, `${what}: the plan on show`);
        assert.equal(await linked(p), before.address, `${what}: the address holds what is shown`);
      }
      await assertNothingInjected(p);
      if (what === 'script in a preset name') {
        await p.screenshot({ path: join(SHOTS, 'bad-link.png') });
        await p.fill('#f-tp', '4');
        await settle(p);
        const want = JSON.parse(DEFAULT);
        want.plan.tp = 4;
        delete want.plan.dp;
        assertNumbers(cliEstimate(JSON.stringify(want)).report, await metrics(p), 'usable after a bad link');
        await p.click('#link-status button');
        assert.equal(await note.isVisible(), false, 'dismissed');
      }
    }
    await p.close();
  });

  test('a key that does nothing for the link\'s model is left out, and the page says so', async () => {
    const fragment = '#v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096&ep=8';
    const refused = cliEstimateLink(fragment);
    assert.equal(refused.status, 2, 'the CLI refuses EP on a dense model');
    assert.match(refused.stderr, /plan\.ep=8 needs a mixture-of-experts model/);
    const p = await open(site.url + fragment);
    const note = p.locator('#link-status');
    assert.equal(await note.isVisible(), true);
    assert.match(await note.textContent(), /Left out of this link, as it does nothing here: plan\.ep=8 \(it needs model\.moe\)\./);
    assert.equal((await pageScenario(p)).plan.ep, undefined);
    const without = cliEstimateLink(fragment.replace('&ep=8', ''));
    assert.equal(without.status, 0, without.stderr);
    assertNumbers(without.report, await metrics(p), 'the link without EP');
    await go(p, `${site.url}#v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=2&gbs=512&seq=4096`);
    assert.equal(await note.isVisible(), false, 'a link that keeps every key: no note');
    await p.close();
  });

  // Issue 37 item 9: a link cut when it was copied (here after gbs=512) said nothing and opened
  // with its tail at the defaults (57.9 s instead of 29.5 s). Now: "this link is incomplete";
  // opened fresh, the default scenario; pasted into an open page, the plan on show stays.
  test('a link cut after gbs=512: "this link is incomplete", and the plan on show stays', async () => {
    const made = cliLink(DEFAULT, { base: site.url });
    assert.equal(made.status, 0, made.stderr);
    assert.match(made.link, /&end$/);
    const cut = made.link.slice(0, made.link.indexOf('&gbs=512') + '&gbs=512'.length);
    const p = await open(cut);
    const note = p.locator('#link-status');
    assert.equal(await note.isVisible(), true, 'a message');
    assert.match(await note.textContent(), /^This link is incomplete: it stops after “gbs=512”, so the rest of its plan was lost when it was copied\. Copy the whole link again \(it ends with “&end”\)\. Showing the default scenario/);
    assertNumbers(defaultNumbers, await metrics(p), 'opened fresh: the default scenario');
    // An open page with another plan: the cut link pasted in leaves that plan and its address.
    const other = readFileSync(join(SCENARIO_DIR, 'llama3-8b_dgx-h100x1.json'), 'utf8');
    const otherLink = cliLink(other, { base: site.url }).link;
    await go(p, otherLink);
    const shown = await metrics(p);
    await go(p, cut);
    assert.match(await note.textContent(), /^This link is incomplete: .*The plan on show is unchanged\./);
    assert.equal(await p.inputValue('#f-model'), 'llama3-8b');
    assert.deepEqual(await metrics(p), shown, 'the previous plan, intact');
    assert.match(await linked(p), /#v=3&model=llama3-8b&.*&end$/, 'its own link back in the address');
    await p.close();
  });

  // A link the engine cannot read, pasted into an open page, used to replace the plan on show with
  // the default scenario (a bad paste cost the user their plan); it now leaves it, as a cut link
  // does. Opened fresh, the default scenario, as before (hostile.test.mjs).
  test('a link that does not open a scenario, pasted into an open page, leaves the plan on show', async () => {
    const other = readFileSync(join(SCENARIO_DIR, 'llama3-8b_dgx-h100x1.json'), 'utf8');
    const p = await open(cliLink(other, { base: site.url }).link);
    const shown = await metrics(p);
    const own = await linked(p);
    for (const bad of ['#v=3&model=no-such-model&end', '#v=3&tp=notanumber&end']) {
      await go(p, `${site.url}${bad}`);
      const note = await p.textContent('#link-status');
      assert.match(note, /^This link does not open a scenario: .+\. The plan on show is unchanged\./, bad);
      assert.equal(await p.inputValue('#f-model'), 'llama3-8b', bad);
      assert.deepEqual(await metrics(p), shown, `${bad}: the previous plan, intact`);
      assert.equal(await linked(p), own, `${bad}: its own link back in the address`);
    }
    await p.close();
  });

  test('a link pasted into the open page opens (hashchange)', async () => {
    const p = await open(site.url);
    await linked(p);
    const text = readFileSync(join(SCENARIO_DIR, 'llama3-8b_dgx-h100x1.json'), 'utf8');
    const made = cliLink(text, {});
    assert.equal(made.status, 0, made.stderr);
    const opens = await p.evaluate(() => window.__stepcast.opens);
    await p.evaluate((h) => { location.hash = h; }, made.link.slice(made.link.indexOf('#')));
    await p.waitForFunction((n) => window.__stepcast.opens > n, opens);
    await settle(p);
    assert.equal(await p.inputValue('#f-model'), 'llama3-8b');
    assertNumbers(cliEstimate(text).report, await metrics(p), 'the pasted link');
    await p.evaluate(() => { location.hash = '#v=2&model=nope'; });
    await p.waitForFunction((n) => window.__stepcast.opens > n + 1, opens);
    await settle(p);
    assert.match(await p.textContent('#link-status'), /model preset “nope”.*The plan on show is unchanged\./);
    assertNumbers(cliEstimate(text).report, await metrics(p), 'a bad pasted link: the plan on show stays');
    await p.close();
  });

  test('?embed=1: the compact calculator, chosen controls, results, and "Open in Stepcast" with the same plan', async () => {
    const fragment = '#v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=2&gbs=512&rc=full&seq=4096';
    const p = watch(await context.newPage(), problems);
    await p.setViewportSize({ width: 720, height: 460 });
    await p.goto(`${site.url}?embed=1&controls=tp,pp,recompute${fragment}`);
    await calculatorSettled(p);
    assert.equal(await p.isVisible('header.top'), false, 'no header');
    assert.equal(await p.isVisible('#examples'), false, 'no menus');
    const shown = await calculatorShows(p);
    assert.deepEqual(shown.controls, ['tp', 'pp', 'recompute']);
    const want = cliEstimateLink(fragment);
    assert.equal(want.status, 0, want.stderr);
    assertCalculator(want.report, shown);
    await p.screenshot({ path: join(SHOTS, 'embed-iframe.png') });
    await p.fill('stepcast-calculator [data-control="pp"]', '4');
    await calculatorSettled(p); // "Open in Stepcast" follows the link, which comes after the estimate
    const { open: full, ...changed } = await calculatorShows(p);
    assert.ok(full.startsWith(`${site.url}#v=3&`), `the full page, without ?embed (${full})`);
    assert.match(full, /&pp=4&/);
    const q = await open(full);
    assert.equal(await q.isVisible('header.top'), true);
    const fullNumbers = await metrics(q);
    assert.deepEqual(jsonDiff(Object.fromEntries(CALCULATOR.map((k) => [k, fullNumbers[k]])),
      Object.fromEntries(CALCULATOR.map((k) => [k, changed[k]]))), [], 'the full page shows the same plan');
    await q.close();
    await p.setViewportSize({ width: 360, height: 700 });
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `no sideways scrolling in a narrow iframe (${overflow}px)`);
    await p.close();
  });

  test('no console errors, no dialogs', () => {
    assert.deepEqual(problems, []);
  });
});
