// How many GPUs for a deadline on the page (issue 37, "sweeps people ask for"), in Chromium: the
// tokens of the cost form within the days typed give `stepcast deadline`'s node counts, days,
// GPU-hours and cheapest count; Apply puts that count and its plan into the form, which then
// estimates what the sweep said; a deadline of nothing is refused at the field.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

import { CLI, cliEstimate, requireBuilt } from '../wasm/common.mjs';
import { changes, pageScenario, openPage, suite } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block' });
// Llama 3 8B on one DGX H100, 512 sequences of 8,192 tokens a step; 1 T tokens (the cost form's
// default, 1,000 billion) within 30 days needs at least 3 nodes even at the H100's peak.
const START = 'v=2&model=llama3-8b&node=dgx-h100&nodes=1&tp=1&pp=1&mb=1&gbs=512&seq=8192';

function cliDeadline(scenario, days, tokens) {
  const r = spawnSync(CLI, ['deadline', '-', '--days', String(days), '--tokens', String(tokens), '--format', 'json'],
    { input: JSON.stringify(scenario), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe('deadline', () => {
  test('1 T tokens in 30 days: the CLI\'s node counts and cheapest; Apply gives its plan and time', async () => {
    const p = await openPage(fx, `${fx.site.url}#${START}`);
    const scenario = await pageScenario(p);
    const want = cliDeadline(scenario, 30, 1e12);
    assert.ok(want.cheapest !== null, 'some node count meets it');
    await p.fill('#f-days', '30');
    await p.click('#deadline-go');
    await p.waitForSelector('.deadline-table tbody tr');
    const rows = await p.$$eval('.deadline-table tbody tr', (trs) => trs.map((tr) => ({
      nodes: Number(tr.dataset.nodes), cheapest: tr.classList.contains('cheapest'), late: tr.classList.contains('late'),
      cells: [...tr.querySelectorAll('td')].map((td) => td.textContent) })));
    assert.deepEqual(rows.map((r) => r.nodes), want.points.map((pt) => pt.nodes));
    assert.deepEqual(rows.map((r) => r.cheapest), want.points.map((_, i) => i === want.cheapest));
    assert.deepEqual(rows.map((r) => r.late), want.points.map((pt) => !pt.meets));
    for (const [i, pt] of want.points.entries())
      assert.equal(rows[i].cells[3], Math.round(pt.gpu_hours).toLocaleString('en-US'), `GPU-hours at ${pt.nodes} nodes`);
    const best = want.points[want.cheapest];
    assert.match(await p.textContent('#deadline-status'), new RegExp(`^The cheapest that meets 30 days: ${best.nodes} nodes \\(${best.gpus} GPUs\\)`));
    // Apply: the cluster grows to that count and the plan is the sweep's; the estimate is its time.
    // (Apply asks the engine once before the form changes: wait for the change, not just a settled page.)
    await changes(p, () => p.click('.deadline-table tr.cheapest button'));
    const applied = await pageScenario(p);
    assert.equal(applied.cluster.nodes, best.nodes);
    for (const k of ['tp', 'pp', 'micro_batch']) assert.equal(applied.plan[k] ?? 1, best.plan[k], k);
    const now = cliEstimate(JSON.stringify(applied), { timeline: false }).report;
    assert.ok(Math.abs(now.iteration_time_s / best.iteration_time_s - 1) < 1e-9, `${now.iteration_time_s} vs ${best.iteration_time_s}`);
    await p.close();
  });

  test('a deadline of 0 days is refused with the engine\'s words, an empty one before asking; no table', async () => {
    const p = await openPage(fx, `${fx.site.url}#${START}`);
    await p.fill('#f-days', '0');
    await p.click('#deadline-go');
    await p.waitForFunction(() => /^No sweep/.test(document.querySelector('#deadline-status').textContent));
    assert.equal(await p.textContent('#deadline-status'), 'No sweep for this scenario: deadline: days must be a number above 0 (got 0)');
    await p.fill('#f-days', '');
    await p.click('#deadline-go');
    await p.waitForFunction(() => document.querySelector('#deadline-status').textContent === 'Enter the deadline in days.');
    assert.equal(await p.locator('.deadline-table').count(), 0);
    await p.close();
  });
});
