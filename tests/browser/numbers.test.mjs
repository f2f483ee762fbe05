// Numbers as people type them (issue 37 item 10), in Chromium: "15T" tokens is 15 trillion (the
// time to train in years, not 15 billion tokens' hours), "2k" sequences is a global batch of
// 2,000, and a huge result prints in a few characters, not 30 digits.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { CLI, cliEstimate, requireBuilt } from '../wasm/common.mjs';
import { assertNumbers, linked, metrics, openPage, pageScenario, settle, suite } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block' });

/** The cost card's time to train: [seconds, text]. */
async function trainTime(p) {
  const el = p.locator('#cost-out [data-metric="train_time_s"]');
  return [Number(await el.getAttribute('data-value')), (await el.locator('.metric-value').textContent()).trim()];
}

test('a user types 15T tokens, a 2k global batch and 1e30 billion tokens', async () => {
  const p = await openPage(fx, fx.site.url);
  const tps = (await metrics(p)).tokens_per_s;

  await p.fill('#f-tokens', '15T');
  await p.waitForFunction(() => Number(document.querySelector('#cost-out [data-metric="train_time_s"]').dataset.value) > 1e8);
  const [seconds, text] = await trainTime(p);
  console.log(`15T tokens at ${Math.round(tps)} tokens/s: ${text}`);
  assert.ok(Math.abs(seconds - 15e12 / tps) <= 1e-9 * seconds, `15 trillion tokens ÷ ${tps} tokens/s, not ${seconds} s`);
  assert.match(text, /^\d+(\.\d+)? years$/, 'said in years');
  // The link carries 15 trillion: opened fresh, the same time to train.
  const url = await linked(p);
  const q = await openPage(fx, url);
  assert.equal(Number(await q.inputValue('#f-tokens')), 15000, 'in billions in the field');
  assert.deepEqual(await trainTime(q), [seconds, text]);
  await q.close();

  await p.fill('#f-global_batch', '2k');
  await settle(p);
  const s = await pageScenario(p);
  assert.equal(s.plan.global_batch, 2000, '2k sequences');
  const cli = cliEstimate(JSON.stringify(s), { timeline: false });
  assert.equal(cli.status, 0, cli.stderr);
  assertNumbers(cli.report, await metrics(p), "the CLI's numbers for a global batch of 2,000");
  assert.equal(await p.inputValue('#f-global_batch'), '2k', 'the field keeps what was typed');

  await p.fill('#f-tokens', '1e30');
  await p.waitForFunction(() => Number(document.querySelector('#cost-out [data-metric="train_time_s"]').dataset.value) > 1e20);
  const huge = await p.$$eval('#cost-out .metric-value', (els) => els.map((e) => e.textContent.trim()));
  console.log(`1e30 billion tokens: ${huge.join(' · ')}`);
  for (const t of huge) assert.ok(t.length <= 26 && /×10/.test(t), `"${t}" compact`);

  await p.fill('#f-tp', 'eight');
  await p.waitForSelector('#inputs .field.invalid');
  assert.match(await p.textContent('#inputs .field.invalid .error'), /Enter a number/);
  await p.close();
});
