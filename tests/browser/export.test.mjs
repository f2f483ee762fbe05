// What a user takes away from the page, in Chromium: the memory per stage as a table and CSV (the
// CLI's bytes), the breakdown and census as CSV, the memory chart as SVG, the timeline as PNG, a
// print layout without the controls, and the headline numbers announced to screen readers.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { CLI, cliEstimate, requireBuilt } from '../wasm/common.mjs';
import { pageScenario, settle, suite, watch } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block', acceptDownloads: true });
const DEFAULT = 'v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096';
const GIB = 2 ** 30;

/** CSV text -> rows of fields (no quoted commas in these files but the census's descriptions). */
function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; } else if (c === '\n') { row.push(field.replace(/\r$/, '')); rows.push(row); row = []; field = ''; } else field += c;
  }
  return rows;
}

async function download(p, selector) {
  const [d] = await Promise.all([p.waitForEvent('download'), p.click(selector)]);
  return { name: d.suggestedFilename(), body: readFileSync(await d.path()) };
}

/**
 * The memory table's cells once they are `want` (or after 5 s, whatever they are then): the table's
 * rows are written on its disclosure's toggle event, a task that may run after the click returns.
 * The predicate is a function, not a string: Playwright evaluates a string predicate on every poll
 * with eval, which the page's Content-Security-Policy refuses (an exception on the page, once the
 * first poll has missed); a function is compiled once, by the DevTools protocol.
 */
async function tableCells(page, want) {
  const read = () => [...document.querySelectorAll('.memory-table tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent));
  await page.waitForFunction((json) => JSON.stringify([...document.querySelectorAll('.memory-table tbody tr')]
    .map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent))) === json, JSON.stringify(want), { timeout: 5000 }).catch(() => {});
  return page.evaluate(read);
}

let p;
let report;

describe('exports', () => {
  test('memory per stage: a table and a CSV with the CLI\'s numbers', async () => {
    p = watch(await fx.context.newPage(), fx.problems);
    await p.goto(`${fx.site.url}#${DEFAULT}`);
    await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
    await settle(p);
    const cli = cliEstimate(JSON.stringify(await pageScenario(p)));
    assert.equal(cli.status, 0, cli.stderr);
    report = cli.report;
    // Each part, their total, what PyTorch would report at the peak (allocated, reserved), the
    // GPU, and what offloading keeps on the host.
    const columns = ['weights', 'gradients', 'optimizer', 'activations', 'moe_dispatch', 'ep_overlap', 'wgrad_dummies', 'allocator', 'userbuffers', 'deepep', 'nccl', 'other',
      'total', 'allocated', 'reserved', 'capacity', 'offloaded', 'optimizer_offloaded'];
    const expected = (r) => r.stages.map((s) => columns.map((k) => (s.memory_bytes[k] / GIB).toFixed(1)));
    await p.click('.mem-table summary');
    const cells = await tableCells(p, expected(report));
    assert.deepEqual(cells, expected(report));
    assert.deepEqual(await p.$$eval('.memory-table thead th', (ths) => ths.slice(-6).map((th) => th.textContent)),
      ['Total', 'Allocated', 'Reserved', 'Capacity', 'Offloaded', 'Optimizer offloaded']);
    // The legend names the parts this dense plan has: no MoE dispatch, EP overlap or DeepEP buffers.
    const legend = await p.$$eval('#memory .legend li:not([hidden])', (lis) => lis.map((li) => li.childNodes[1].textContent));
    const had = columns.slice(0, 12).filter((k) => report.stages.some((s) => s.memory_bytes[k] > 0));
    assert.equal(legend.length, had.length + 1, `${legend}: the parts ${had} and the GPU capacity`);
    for (const absent of ['MoE dispatch', 'EP overlap', 'DeepEP buffers']) assert.ok(!legend.includes(absent), `${absent} in ${legend}`);
    assert.ok(legend.includes('Weights') && legend.includes('GPU capacity'));
    const { name, body } = await download(p, '[data-download="memory.csv"]');
    assert.equal(name, 'memory.csv');
    const rows = parseCsv(body.toString());
    assert.deepEqual(rows[0], ['stage', 'layers', ...columns.map((k) => `${k}_gib`), 'fits']);
    assert.equal(rows.length, 1 + report.stages.length);
    for (const [i, s] of report.stages.entries()) {
      for (const [j, k] of columns.entries()) assert.equal(Number(rows[i + 1][2 + j]), s.memory_bytes[k] / GIB, `stage ${i} ${k}`);
      assert.equal(rows[i + 1][2 + columns.length], String(s.fits));
    }
    // Open, the table stays open as the plan changes, and holds the new plan's numbers (its rows
    // are written only while it is open: issue 39).
    await p.fill('#f-micro_batch', '2');
    await settle(p);
    const two = cliEstimate(JSON.stringify(await pageScenario(p))).report;
    assert.equal(await p.$eval('.mem-table', (d) => d.open), true);
    const after = await tableCells(p, expected(two));
    assert.deepEqual(after, expected(two));
    assert.notDeepEqual(after, cells, 'micro-batch 2 holds more activations');
    // Closed, an edit leaves it to be written when it opens: with that plan's numbers.
    await p.click('.mem-table summary');
    await p.fill('#f-micro_batch', '1');
    await settle(p);
    await p.click('.mem-table summary');
    assert.deepEqual(await tableCells(p, cells), cells);
    await p.click('.mem-table summary');
  });

  test('offloaded activations: the memory card says what the host holds, per GPU and per node', async () => {
    const q = watch(await fx.context.newPage(), fx.problems);
    await q.goto(`${fx.site.url}#v=2&model=llama3-8b&node=dgx-h100&nodes=1&tp=1&pp=1&mb=2&gbs=64&seq=8192&rc=none&col=22`);
    await q.waitForSelector('#host-note', { timeout: 20000 });
    await settle(q);
    const cli = cliEstimate(JSON.stringify(await pageScenario(q)), { timeline: false }).report;
    assert.equal(cli.plan.cpu_offloading_num_layers, 22);
    const perGpu = Math.max(...cli.stages.map((st) => st.memory_bytes.offloaded));
    assert.ok(perGpu > 0 && cli.host_memory_bytes_per_node >= 8 * perGpu * 0.999, 'eight GPUs a node offload');
    const g = (b) => `${(b / GIB).toFixed(1)} GiB`;
    assert.equal(await q.textContent('#host-note'), `Offloaded activations and optimizer state are not in the bars: ${g(perGpu)} per GPU at most, ` +
      `${g(cli.host_memory_bytes_per_node)} of host memory per node.`);
    await q.close();
  });

  test('breakdown and census as CSV, memory as SVG, timeline as PNG', async () => {
    const breakdown = parseCsv((await download(p, '[data-download="breakdown.csv"]')).body.toString());
    assert.deepEqual(breakdown[0], ['part', 'seconds', 'share']);
    for (const [k, v, share] of breakdown.slice(1, -1)) {
      assert.equal(Number(v), report.breakdown_s[k], k);
      assert.equal(Number(share), report.breakdown_s[k] / report.iteration_time_s);
    }
    assert.deepEqual(breakdown.at(-1).slice(0, 2), ['iteration', String(report.iteration_time_s)]);
    const census = parseCsv((await download(p, '[data-download="census-stage-0.csv"]')).body.toString());
    assert.equal(census.length - 1, report.stages[0].communication.length);
    assert.deepEqual(census.slice(1).map((r) => Number(r[9])), report.stages[0].communication.map((op) => op.total_time_s));
    const svg = (await download(p, '[data-download="memory.svg"]')).body.toString();
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    // One bar per part of the report's memory table (weights, gradients, optimizer state,
    // activations, the software's buffers, Transformer Engine's dummy weight gradients, allocator
    // and the rest): twelve per stage.
    assert.equal((svg.match(/<rect /g) ?? []).length, 12 * report.stages.length, 'twelve parts per stage');
    assert.doesNotMatch(svg, /var\(--/, 'colours written out, not the page\'s variables');
    const png = (await download(p, '[data-download="timeline.png"]')).body;
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  });

  test('print: the results without the controls; the headline numbers announced', async () => {
    // Announced once typing pauses (0.8 s after the estimate).
    await p.waitForFunction(() => document.querySelector('#announce').textContent !== '');
    // (The plan first: TP × PP × DP, no CP, VPP or EP above 1 in this one.)
    assert.equal(await p.textContent('#announce'), `TP ${report.plan.tp} × PP ${report.plan.pp} × DP ${report.plan.dp}: ` +
      `${(report.iteration_time_s).toFixed(1)} s per step, ` +
      `${Math.round(report.tokens_per_s).toLocaleString('en-US')} tokens/s, MFU ${(report.mfu * 100).toFixed(1)} %.`);
    await p.emulateMedia({ media: 'print' });
    assert.equal(await p.isVisible('#inputs'), false);
    assert.equal(await p.isVisible('#metrics'), true);
    assert.equal(await p.isVisible('[data-download="memory.csv"]'), false);
    await p.emulateMedia({ media: 'screen' });
    await p.close();
  });
});
