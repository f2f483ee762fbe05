// The plan on show is named (issue 37 item 7), in Chromium: the results header and the summary bar
// say which plan the numbers are for (TP × PP × DP, with CP, VPP and EP where they are not 1),
// each compare column is headed by its plan, and on a phone the column of the plan on show stays
// in view while the pinned ones scroll; the summary bar and the skip link go to the results without
// touching the plan or its link. Screenshots: named-desktop, named-phone.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { CLI, requireBuilt } from '../wasm/common.mjs';
import { PHONE, SHOTS, linked, openPage, settle, suite } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block' });
const DEFAULT = 'v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096';

/** Pins the plan on show, then types `values` ({control id: value}) and waits for the estimate. */
async function pinThenType(p, values) {
  await p.click('#pin-plan');
  for (const [id, v] of Object.entries(values)) await p.fill(id, v);
  await settle(p);
}

const heads = (p) => p.$$eval('#compare thead .cmp-plan', (els) => els.map((e) => e.textContent));

test('the results, the summary bar and each compare column name their plan', async () => {
  const p = await openPage(fx, `${fx.site.url}#${DEFAULT}`);
  assert.equal(await p.textContent('#plan-name'), 'of TP 8 × PP 4 × DP 2');
  await pinThenType(p, { '#f-tp': '4', '#f-pp': '8' });
  assert.equal(await p.textContent('#plan-name'), 'of TP 4 × PP 8 × DP 2');
  assert.match(await p.textContent('#summary-bar'), /^TP 4 × PP 8 × DP 2: /);
  assert.deepEqual(await heads(p), ['TP 8 × PP 4 × DP 2', 'TP 4 × PP 8 × DP 2']);
  await pinThenType(p, { '#f-vpp': '2' });
  assert.deepEqual(await heads(p), ['TP 8 × PP 4 × DP 2', 'TP 4 × PP 8 × DP 2', 'TP 4 × PP 8 × DP 2 · VPP 2']);
  await p.$eval('#compare-card', (el) => el.scrollIntoView());
  await p.screenshot({ path: join(SHOTS, 'named-desktop.png') });

  // A phone: the table scrolls sideways; the plan on show stays in view at either end.
  await p.setViewportSize(PHONE);
  await pinThenType(p, { '#f-tp': '2', '#f-pp': '4', '#f-vpp': '1' });
  assert.deepEqual((await heads(p)).length, 4);
  const inView = () => p.$eval('#compare .table-scroll', (box) => {
    const b = box.getBoundingClientRect();
    const th = box.querySelector('thead th.on-show').getBoundingClientRect();
    return th.left >= b.left - 1 && th.right <= b.right + 1 && th.width > 40;
  });
  // ... and leaves room for a pinned column beside the labels (not all hidden under it).
  const room = await p.$eval('#compare .table-scroll', (box) => box.querySelector('thead th.on-show').getBoundingClientRect().left -
    box.querySelector('thead th:first-child').getBoundingClientRect().right);
  assert.ok(room >= 80, `${room} px for the pinned columns at 390 px`);
  for (const end of ['start', 'end']) {
    await p.$eval('#compare .table-scroll', (box, e) => { box.scrollLeft = e === 'start' ? 0 : box.scrollWidth; }, end);
    assert.equal(await inView(), true, `the plan on show in view, scrolled to the ${end}`);
  }
  await p.$eval('#compare .table-scroll', (box) => { box.scrollLeft = 0; });
  await p.$eval('#compare-card', (el) => el.scrollIntoView());
  await p.screenshot({ path: join(SHOTS, 'named-phone.png') });
  await p.close();
});

// The summary bar and "Skip to the results" link to #results: they move there and leave the
// address alone. Followed as a link, the fragment "results" was opened as a plan that is not one:
// the default plan in place of the user's, with "This link does not open a scenario".
test('the summary bar and the skip link go to the results and keep the plan and its link', async () => {
  const plan = 'v=2&model=llama3-8b&node=dgx-h100&nodes=2&tp=2&pp=2&gbs=256&seq=4096';
  const p = await openPage(fx, `${fx.site.url}#${plan}`, PHONE);
  const address = await linked(p); // the plan's link, as the page writes it
  const onShow = () => p.evaluate(() => ({
    address: location.href, bar: document.querySelector('#summary-bar').textContent,
    notice: !document.querySelector('#link-status').hidden, focus: document.activeElement?.id,
    resultsTop: Math.round(document.querySelector('#results').getBoundingClientRect().top),
  }));
  const before = await onShow();
  assert.match(before.bar, /^TP 2 × PP 2 × DP 4: /);
  assert.ok(before.resultsTop > PHONE.height, 'on a phone the results start below the form');
  await p.click('#summary-bar');
  await settle(p);
  let after = await onShow();
  assert.deepEqual({ ...after, resultsTop: undefined }, { ...before, focus: 'results', resultsTop: undefined }, 'the summary bar');
  assert.ok(Math.abs(after.resultsTop) <= 1, `the results at the top of the screen (${after.resultsTop} px)`);
  assert.equal(after.address, address);

  // From the keyboard: Enter on the skip link (shown when it has the focus).
  await p.evaluate(() => window.scrollTo(0, 0));
  await p.focus('a.skip');
  assert.equal(await p.evaluate(() => document.activeElement.textContent), 'Skip to the results');
  await p.keyboard.press('Enter');
  await settle(p);
  after = await onShow();
  assert.equal(after.focus, 'results', 'the skip link');
  assert.equal(after.address, address);
  assert.equal(after.notice, false);

  // Typed after the address: the browser goes there; the address keeps the plan's link.
  await p.evaluate(() => { location.hash = 'results'; });
  await p.waitForFunction((a) => location.href === a, address);
  await settle(p);
  after = await onShow();
  assert.equal(after.bar, before.bar);
  assert.equal(after.notice, false);
  await p.close();
});

// A touch screen without a keyboard (a phone) is not told how to use the keyboard; a desktop is.
test('the keyboard hint only where there is a keyboard', async () => {
  const phone = await fx.browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true, serviceWorkers: 'block' });
  const p = await phone.newPage();
  await p.goto(fx.site.url);
  await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
  assert.equal(await p.isVisible('.kbd-hint'), false, 'a phone');
  await phone.close();
  const q = await openPage(fx, fx.site.url);
  assert.equal(await q.isVisible('.kbd-hint'), true, 'a desktop');
  await q.close();
});
