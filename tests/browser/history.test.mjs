// History and compare in step (issue 37 item 11), in Chromium: a user applies a faster plan, goes
// Back, pins the plan on show, goes Forward. At every step the numbers are the CLI's for the
// address; after Forward the applied plan is on show (its address once showed over the default's
// numbers: the pin had written ?compare= into the entry, and a step between entries whose query
// differs fires no hashchange), the pin is still in the card and in the address.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CLI, cliEstimateLink, requireBuilt } from '../wasm/common.mjs';
import { assertNumbers, linked, metrics, openPage, planLink, searchShown, suite } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block' });

/** The numbers on show are the CLI's for the address; returns the address. */
async function inStep(p, what) {
  const url = await linked(p);
  const want = cliEstimateLink(planLink(url));
  assert.equal(want.status, 0, want.stderr);
  assertNumbers(want.report, await metrics(p), `${what}: the address's numbers`);
  return url;
}

const heads = (p) => p.$$eval('#compare thead .cmp-plan', (els) => els.map((e) => e.textContent));

test('Apply, Back, Pin, Forward: the numbers, the address and the comparison stay in step', async () => {
  const p = await openPage(fx, fx.site.url);
  await searchShown(p);
  const first = await inStep(p, 'loaded');
  await p.click('#search tbody tr:has(.apply) .apply');
  await searchShown(p);
  const applied = await inStep(p, 'applied');
  assert.notEqual(new URL(applied).hash, new URL(first).hash);
  const tp = await p.inputValue('#f-tp');

  await p.goBack();
  await p.waitForFunction((h) => location.hash === h, new URL(first).hash);
  await p.waitForFunction(() => window.__stepcast.linked === window.__stepcast.rendered);
  assert.equal(new URL(await inStep(p, 'back')).hash, new URL(first).hash);

  await p.click('#pin-plan');
  await p.waitForFunction(() => location.hash.includes('#compare='));
  await p.goForward();
  await p.waitForFunction((t) => document.querySelector('#f-tp').value === t, tp, { timeout: 15000 });
  const forward = await inStep(p, 'forward');
  assert.equal(new URL(planLink(forward)).hash, new URL(applied).hash, 'the applied plan, in the form and the address');
  assert.match(forward, /#compare=/, 'the pin stays in the address');
  assert.equal((await heads(p)).length, 2, 'the pinned plan beside the one on show');
  await p.close();
});
