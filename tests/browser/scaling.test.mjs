// The scaling card, in Chromium: the plan on show at other node counts (DP derived, the global
// batch kept) and TP degrees, the engine's sweep (its scaling() binding in the page, `stepcast
// scaling` on the command line: the same points), each point the CLI's estimate of that variant,
// refusals in the page's words, perfect scaling drawn from the plan on show, the chart
// downloadable as SVG.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { CLI, cliEstimate, cliScaling, requireBuilt } from '../wasm/common.mjs';
import { SHOTS, pageScenario, plainMessage, settle, suite, watch } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block', acceptDownloads: true });

describe('scaling', () => {
  test('each point is the CLI\'s estimate of the plan at that size; refusals said plainly; SVG download', async () => {
    const p = watch(await fx.context.newPage(), fx.problems);
    await p.goto(`${fx.site.url}#v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096`);
    await settle(p);
    await p.waitForFunction(() => typeof window.__stepcast.scaling === 'number');
    const scenario = await pageScenario(p);
    const table = (k) => p.$$eval(`.scaling-table tbody:nth-of-type(${k}) tr`, (trs) => trs.map((tr) => [tr.querySelector('th').textContent, tr.dataset.value, tr.textContent]));
    const rows = await table(1);
    const byLabel = Object.fromEntries(rows.map(([label, value, text]) => [label, { value, text }]));
    const byTp = Object.fromEntries((await table(2)).map(([label, value, text]) => [label, { value, text }]));
    // The page's chart data is the CLI's sweep of the same scenario, point for point.
    const cli = cliScaling(JSON.stringify(scenario));
    assert.equal(cli.status, 0, cli.stderr);
    assert.deepEqual(cli.result.base, { nodes: 8, tp: 8 });
    const label = (p, axis) => `${p[axis]}${p[axis] === cli.result.base[axis] ? ' (on show)' : ''}`;
    assert.deepEqual(rows.map(([l]) => l), cli.result.nodes.map((p) => label(p, 'nodes')));
    for (const [shown, want] of [[byLabel, cli.result.nodes.map((p) => [label(p, 'nodes'), p])], [byTp, cli.result.tp.map((p) => [label(p, 'tp'), p])]]) {
      for (const [l, p] of want) {
        if (p.error) assert.ok(shown[l].text.includes(plainMessage(p.error)), `${l}: the engine's refusal in the page's words`);
        else assert.equal(Number(shown[l].value), p.tokens_per_s, `${l}: the CLI's tokens/s`);
      }
    }
    const variant = (cluster, plan) => {
      const r = cliEstimate(JSON.stringify({ ...scenario, cluster: { ...scenario.cluster, ...cluster }, plan: { ...scenario.plan, dp: undefined, ...plan } }), { timeline: false });
      return r;
    };
    for (const nodes of [4, 16, 64]) {
      const r = variant({ nodes }, {});
      assert.equal(r.status, 0, r.stderr);
      assert.equal(Number(byLabel[String(nodes)].value), r.report.tokens_per_s, `${nodes} nodes`);
    }
    assert.equal(Number(byLabel['8 (on show)'].value), cliEstimate(JSON.stringify(scenario), { timeline: false }).report.tokens_per_s);
    const tp4 = variant({}, { tp: 4 });
    assert.equal(Number(byTp['4'].value), tp4.report.tokens_per_s, 'TP 4 on the same nodes');
    // 1 node cannot hold a TP 8 × PP 4 replica; TP 16 does not divide 8 KV heads: said in words.
    assert.match(byLabel['1'].text, /The cluster's 8 GPUs do not split into whole model replicas of TP 8 × PP 4 = 32 GPUs/);
    assert.match(byTp['16'].text, /TP 16 does not divide the 8 KV heads/);
    // Perfect scaling from the plan on show: the efficiency column.
    const eff = (n) => Number(byLabel[String(n)].text.match(/(\d+) %$/)[1]);
    const at = (n) => variant({ nodes: n }, {}).report.tokens_per_s;
    assert.equal(eff(16), Math.round((100 * at(16) / at(8)) / 2));
    const [d] = await Promise.all([p.waitForEvent('download'), p.click('[data-download="scaling.svg"]')]);
    const svg = readFileSync(await d.path(), 'utf8');
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.equal((svg.match(/<rect /g) ?? []).length, rows.filter(([, value]) => value !== '').length,
      'a bar per node count that estimates (not 1 and 2 nodes)');
    assert.equal(rows.filter(([, value]) => value !== '').length, 5, '4 to 64 nodes');
    await p.locator('#scaling-card').screenshot({ path: join(SHOTS, 'scaling.png') });
    await p.close();
  });
});
