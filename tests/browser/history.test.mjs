// History and compare in step (issue 37 item 11), in Chromium, as a user does it: applies a faster
// plan from the search, goes Back, pins the plan on show, goes Forward, then Back and Forward once
// more. At every step the plan on show (the form, the name over the results), its numbers, the
// address bar and the comparison agree: the numbers are the CLI's for the address, each column of
// the comparison the CLI's for its plan, the pins in the address those in the card. Forward is
// never swallowed: one press each, and no step adds a history entry (a pushed one would cut the
// entries ahead). The applied plan's address once showed over the default's numbers: the pin had
// written ?compare= into the entry, and a step between entries whose query differs fires no
// hashchange.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CLI, cliEstimateLink, jsonDiff, requireBuilt } from '../wasm/common.mjs';
import { planName } from '../../web/src/scenario/label.js';
import { assertNumbers, linked, metrics, openPage, planLink, searchShown, suite } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block' });

/** The CLI's report for the plan of an address (its fragment, without the pins). */
function cli(url) {
  const r = cliEstimateLink(planLink(url));
  assert.equal(r.status, 0, r.stderr);
  return r.report;
}

/** The pins an address carries (#compare=<fragment>&compare=... after the plan's fragment). */
const pinsOf = (url) => new URL(url).hash.slice(1).split('#').filter((part) => part.startsWith('compare='))
  .flatMap((part) => new URLSearchParams(part).getAll('compare'));

/** The comparison's columns: [{name, plan, time (its iteration time), onShow}], [] when hidden. */
const columns = (p) => p.evaluate(() => {
  const card = document.querySelector('#compare-card');
  if (card.hidden) return [];
  const heads = [...card.querySelectorAll('thead th.on-show, thead th:has(.cmp-name)')];
  const row = [...card.querySelectorAll('tbody tr')].find((tr) => tr.querySelector('th').textContent === 'Iteration time');
  const cells = [...row.querySelectorAll('td')];
  return heads.map((th, i) => ({
    name: th.querySelector('.cmp-name').textContent, plan: th.querySelector('.cmp-plan').textContent,
    time: Number(cells[i].dataset.value), onShow: cells[i].hasAttribute('data-on-show'),
  }));
});

/**
 * At one step: the address is written; the numbers are the CLI's for its plan; the form and the
 * results' heading show that plan; the pins in the address are `pins` (addresses of plans), each a
 * column of the comparison with the CLI's numbers, and the plan on show is a column of its own
 * unless it is pinned. Returns the address.
 */
async function agree(p, what, pins) {
  const url = await linked(p);
  const r = cli(url);
  assertNumbers(r, await metrics(p), `${what}: the address's numbers`);
  assert.deepEqual([Number(await p.inputValue('#f-tp')), Number(await p.inputValue('#f-pp'))], [r.plan.tp, r.plan.pp], `${what}: the form`);
  assert.equal(await p.textContent('#plan-name'), `of ${planName(r.plan)}`, `${what}: the plan named over the results`);
  const fragments = pinsOf(url);
  assert.deepEqual(fragments, pins.map((u) => new URL(planLink(u)).hash.slice(1)), `${what}: the pins in the address`);
  const cols = await columns(p);
  const onShowPinned = pins.some((u) => planLink(u) === planLink(url));
  const want = pins.map((u, i) => {
    const pr = cli(u);
    return { name: `Pinned ${i + 1}`, plan: planName(pr.plan), time: pr.iteration_time_s, onShow: false };
  });
  if (pins.length && !onShowPinned) want.push({ name: 'On show', plan: planName(r.plan), time: r.iteration_time_s, onShow: true });
  assert.deepEqual(jsonDiff(want, cols), [], `${what}: the comparison (times to 1e-9: WebAssembly and the native CLI)`);
  return url;
}

test('Apply, Back, Pin, Forward (Back and Forward again): the plan, its numbers, the address and the comparison agree', async () => {
  const p = await openPage(fx, fx.site.url);
  await searchShown(p);
  const first = await agree(p, 'loaded', []);
  await p.click('#search tbody tr:has(.apply) .apply');
  await searchShown(p);
  const applied = await agree(p, 'applied', []);
  assert.notEqual(new URL(applied).hash, new URL(first).hash);
  assert.notEqual(cli(applied).iteration_time_s, cli(first).iteration_time_s, 'Apply changed the plan');
  const entries = await p.evaluate(() => history.length);

  // Each step waits until the address's plan is on show (its TP), then for the address to settle.
  const step = async (go, url) => {
    const tp = String(cli(url).plan.tp);
    await go();
    await p.waitForFunction((h) => location.hash.startsWith(h), new URL(planLink(url)).hash);
    await p.waitForFunction((t) => document.querySelector('#f-tp').value === t, tp, { timeout: 15000 });
  };
  await step(() => p.goBack(), first);
  assert.equal(planLink(await agree(p, 'back', [])), planLink(first));

  await p.click('#pin-plan');
  await p.waitForFunction(() => location.hash.includes('#compare='));
  assert.equal(planLink(await agree(p, 'pinned', [first])), planLink(first));

  await step(() => p.goForward(), applied);
  assert.equal(planLink(await agree(p, 'forward', [first])), planLink(applied), 'one Forward: the applied plan');

  await step(() => p.goBack(), first);
  assert.equal(planLink(await agree(p, 'back again', [first])), planLink(first));
  await step(() => p.goForward(), applied);
  assert.equal(planLink(await agree(p, 'forward again', [first])), planLink(applied));
  assert.equal(await p.evaluate(() => history.length), entries, 'no step added a history entry');
  await p.close();
});
