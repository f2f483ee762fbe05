// Calibrate to my cluster, in Chromium (issue "calibrate to your own cluster"): paste nccl-tests
// output, a GEMM table, one layer's measured times and a measured iteration time of the plan on show; the badge says what was fitted and the
// estimate is the CLI's for the same calibration; the link carries it (the fitted scales, not the
// runs) and a fresh page opened from it shows the same calibrated estimate; bad input gets a clear
// message beside the boxes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { CLI, ROOT, cliEstimate, cliEstimateLink, cliRun, requireBuilt } from '../wasm/common.mjs';
import { SHOTS, assertNumbers, linked, metrics, pageScenario, settle, openPage, suite } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block' });
const DEFAULT = 'v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096';
const GEMM_FILE = join(ROOT, 'tests', 'engine', 'fixtures', 'gemm', 'h100-bf16-fp8.csv');
const GEMM = readFileSync(GEMM_FILE, 'utf8');
// The Hopper bf16 GEMM efficiency the presets carry (fitted on the published runs), which the
// status line quotes as the preset.
const HOPPER_GEMM = JSON.parse(readFileSync(join(ROOT, 'presets', 'calibration.json'), 'utf8'))
  .families.hopper.gemm_efficiency;
const NCCL = readFileSync(join(ROOT, 'tests', 'engine', 'fixtures', 'nccl-tests', 'all_reduce_perf-dgx-h100-8gpu.txt'), 'utf8');

const open = (url) => openPage(fx, url);

describe('calibrate to my cluster', () => {
  test('nccl-tests and a measured run: badge, the CLI\'s calibrated estimate, and the same after opening the link', async () => {
    const p = await open(`${fx.site.url}#${DEFAULT}`);
    const before = await metrics(p);
    assert.equal(await p.isVisible('#calibrated'), false, 'not calibrated yet');
    await p.fill('#cal-nccl', NCCL);
    await p.click('#cal-nccl-fit');
    await p.waitForFunction(() => /Fitted the link inside a node/.test(document.querySelector('#cal-status').textContent));
    await settle(p);
    await p.fill('#cal-measured', '45');
    await p.click('#cal-add-run');
    await settle(p);
    assert.match(await p.textContent('#cal-runs'), /TP 8 · PP 4 · micro-batch 1 · global batch 512: 45 s/);
    const scenario = await pageScenario(p);
    assert.equal(scenario.calibration.intra_node_link.scope, 'intra_node');
    assert.deepEqual(scenario.calibration.runs, [{ plan: { tp: 8, pp: 4, global_batch: 512 }, measured_iteration_s: 45 }]);
    const cli = cliEstimate(JSON.stringify(scenario), { timeline: false });
    assert.equal(cli.status, 0, cli.stderr);
    const shown = await metrics(p);
    assertNumbers(cli.report, shown);
    assert.notEqual(shown.iteration_time_s, before.iteration_time_s, 'the estimate changed');
    // One run of this very plan: the calibrated time is the measured one.
    assert.ok(Math.abs(cli.report.iteration_time_s / 45 - 1) < 0.02, `${cli.report.iteration_time_s} s`);
    assert.equal(await p.isVisible('#calibrated'), true);
    assert.match(await p.textContent('#calibrated'), /^Calibrated to your cluster: compute ×\d\.\d{3} \([+−]\d+\.\d %, fitted to 1 measured run\), measured link inside nodes\.$/);
    await p.locator('#results > section').first().screenshot({ path: join(SHOTS, 'calibrated.png') });

    // The link: the fitted scale and link, not the run; a fresh page shows the same estimate.
    const link = await linked(p);
    assert.match(link, /&cal=/);
    assert.doesNotMatch(decodeURIComponent(link), /measured_iteration_s/);
    // The link holds the fitted scale as a number in text: the same estimate to 1e-5.
    const fromLink = cliEstimateLink(link).report;
    assert.ok(Math.abs(fromLink.iteration_time_s / cli.report.iteration_time_s - 1) < 1e-5,
      `${fromLink.iteration_time_s} s from the link, ${cli.report.iteration_time_s} s on the page`);
    const q = await open(link);
    assertNumbers(fromLink, await metrics(q));
    assert.equal(await q.isVisible('#calibrated'), true, 'the badge on the fresh page');
    await q.close();

    // Clear: the presets again.
    await p.click('#cal-clear');
    await settle(p);
    assert.deepEqual(await metrics(p), before);
    assert.equal(await p.isVisible('#calibrated'), false);
    await p.close();
  });

  test('a GEMM table and a layer profile: badge, the CLI\'s estimate, and the same after opening the link', async () => {
    const p = await open(`${fx.site.url}#${DEFAULT}`);
    const before = await metrics(p);
    await p.fill('#cal-gemm', GEMM);
    await p.click('#cal-gemm-fit');
    await p.waitForFunction(() => /^Fitted on the NVIDIA H100/.test(document.querySelector('#cal-status').textContent));
    await settle(p);
    const fitted = cliRun(['calibrate', '--gemm', GEMM_FILE, '--gpu', 'h100-sxm5-80gb']);
    assert.equal(fitted.status, 0, fitted.stderr);
    assert.deepEqual((await pageScenario(p)).calibration, { gemm: JSON.parse(fitted.stdout) });
    assert.match(await p.textContent('#cal-status'), /from 16 GEMMs: bf16 efficiency 0\.70\d+ \(preset ([\d.]+)\).*within \d\.\d %\.$/);
    assert.equal(Number((await p.textContent('#cal-status')).match(/\(preset ([\d.]+)\)/)[1]), HOPPER_GEMM);
    // Nothing but the GEMMs fitted: the badge says only that (no compute scale of 1).
    assert.match(await p.textContent('#calibrated'), /^Calibrated to your cluster: measured GEMMs \(bf16 [+−]\d+\.\d %, fp8 [+−]\d+\.\d %, per-kernel time [+−]\d+\.\d %\)\.$/);

    // One layer of Llama 3 70B at TP 8, micro-batch 1, 4,096 tokens: 1.7 ms forward, 3.4 backward
    // (~0.95 TFLOP a GPU forward at ~560 TFLOP/s).
    await p.fill('#cal-fwd', '1.7');
    await p.fill('#cal-bwd', '3.4');
    await p.click('#cal-add-profile');
    await settle(p);
    const scenario = await pageScenario(p);
    assert.deepEqual(scenario.calibration.layer_profiles, [{ gpu: 'h100-sxm5-80gb', micro_batch: 1, seq_len: 4096,
      tp: 8, cp: 1, forward_s: 0.0017, backward_s: 0.0034 }]);
    assert.match(await p.textContent('#cal-profiles'), /one layer on h100-sxm5-80gb, TP 8 · CP 1 · micro-batch 1 · sequence 4096: 1\.7 ms forward, 3\.4 ms backward/);
    assert.match(await p.textContent('#calibrated'), /measured layers \(1 of 1 profiles of this plan's shape\)/);
    const cli = cliEstimate(JSON.stringify(scenario), { timeline: false });
    assert.equal(cli.status, 0, cli.stderr);
    const shown = await metrics(p);
    assertNumbers(cli.report, shown);
    assert.notEqual(shown.iteration_time_s, before.iteration_time_s, 'the estimate changed');

    // The link carries both; a fresh page shows the same estimate and badge.
    const link = await linked(p);
    const q = await open(link);
    assertNumbers(cli.report, await metrics(q));
    assert.match(await q.textContent('#calibrated'), /measured GEMMs .*measured layers/);
    await q.close();

    // Bad input, beside the boxes: not a table, a negative layer time.
    await p.fill('#cal-gemm', 'hello');
    await p.click('#cal-gemm-fit');
    await p.waitForFunction(() => document.querySelector('#cal-status').classList.contains('error'));
    assert.match(await p.textContent('#cal-status'), /^Not a GEMM table this page can fit: line 1: the header must name the columns m, n, k, dtype and tflops$/);
    await p.fill('#cal-fwd', '-2');
    await p.click('#cal-add-profile');
    assert.equal(await p.textContent('#cal-status'), 'The forward and backward times of one layer must be positive numbers of milliseconds.');
    assert.equal((await pageScenario(p)).calibration.layer_profiles.length, 1, 'nothing added');
    // Removed: the calibration keeps the GEMMs only.
    await p.click('[aria-label="Remove layer profile 1"]');
    await settle(p);
    assert.deepEqual(Object.keys((await pageScenario(p)).calibration), ['gemm']);
    await p.close();
  });

  test('a model with dense and MoE layers: the profile says which, and the estimate is the CLI\'s', async () => {
    // Llama 3 70B has no experts: no menu, every layer profiled.
    const dense = await open(`${fx.site.url}#${DEFAULT}`);
    assert.equal(await dense.isVisible('#cal-layers'), false);
    await dense.close();
    // Moonlight-16B-A3B: its first layer dense, 26 MoE layers (EP 8 on one DGX H100).
    const p = await open(`${fx.site.url}#v=2&model=moonlight-16b-a3b&node=dgx-h100&nodes=1&ep=8&gbs=64&seq=4096`);
    const before = await metrics(p);
    assert.equal(await p.isVisible('#cal-layers'), true);
    await p.selectOption('#cal-layers', 'moe');
    await p.fill('#cal-fwd', '2.5');
    await p.fill('#cal-bwd', '5');
    await p.click('#cal-add-profile');
    await settle(p);
    const scenario = await pageScenario(p);
    assert.deepEqual(scenario.calibration.layer_profiles, [{ gpu: 'h100-sxm5-80gb', micro_batch: 1, seq_len: 4096,
      tp: 1, cp: 1, layers: 'moe', forward_s: 0.0025, backward_s: 0.005 }]);
    assert.match(await p.textContent('#cal-status'), /^Added: one MoE layer on the h100-sxm5-80gb/);
    assert.match(await p.textContent('#cal-profiles'), /one MoE layer on h100-sxm5-80gb, TP 1 · CP 1/);
    const cli = cliEstimate(JSON.stringify(scenario), { timeline: false });
    assert.equal(cli.status, 0, cli.stderr);
    assertNumbers(cli.report, await metrics(p));
    assert.notEqual((await metrics(p)).iteration_time_s, before.iteration_time_s, 'the estimate changed');
    // The dense layer keeps the roofline's time: the same profile of all layers gives another estimate.
    const all = structuredClone(scenario);
    delete all.calibration.layer_profiles[0].layers;
    assert.notEqual(cliEstimate(JSON.stringify(all), { timeline: false }).report.iteration_time_s, cli.report.iteration_time_s);
    // The link carries the kind: a fresh page shows the same estimate.
    const q = await open(await linked(p));
    assertNumbers(cli.report, await metrics(q));
    await q.close();
    await p.close();
  });

  test('nccl-tests across nodes: fitted per port with the NICs of the cluster on show, as the CLI with --nics-per-node', async () => {
    const file = join(ROOT, 'tests', 'engine', 'fixtures', 'nccl-tests', 'all_reduce_perf-2node-ib-ndr.txt');
    // An 8x RTX 4090 box has one NIC: the node's whole bandwidth is one port's.
    const p = await open(`${fx.site.url}#v=2&model=llama3-8b&node=pcie-rtx4090-x8&nodes=2&tp=8&gbs=64`);
    // (The fixture ran on H100s: its ranks named RTX 4090s here, as the page takes only the cluster's GPU.)
    await p.fill('#cal-nccl', readFileSync(file, 'utf8').replaceAll('NVIDIA H100 80GB HBM3', 'NVIDIA GeForce RTX 4090'));
    await p.click('#cal-nccl-fit');
    await p.waitForFunction(() => /Fitted the link between nodes \(per port, 1 per node as in the cluster on show\)/.test(document.querySelector('#cal-status').textContent));
    const fitted = cliRun(['calibrate', '--nccl-tests', file, '--nics-per-node', '1', '--format', 'json']);
    assert.equal(fitted.status, 0, fitted.stderr);
    const want = JSON.parse(fitted.stdout);
    const got = (await pageScenario(p)).calibration.inter_node_link;
    assert.equal(got.busbw_GBps, want.busbw_GBps);
    assert.equal(got.half_peak_bytes, want.half_peak_bytes);
    await p.close();
  });

  test('bad input: not nccl-tests output, a negative time, a run whose plan the cluster cannot hold', async () => {
    const p = await open(`${fx.site.url}#${DEFAULT}`);
    await p.fill('#cal-nccl', 'hello, this is not nccl-tests output');
    await p.click('#cal-nccl-fit');
    await p.waitForFunction(() => document.querySelector('#cal-status').classList.contains('error'));
    assert.match(await p.textContent('#cal-status'), /^Not nccl-tests output this page can read: /);
    assert.equal(await p.getAttribute('#cal-status', 'role'), 'alert');
    await p.fill('#cal-measured', '-3');
    await p.click('#cal-add-run');
    assert.equal(await p.textContent('#cal-status'), 'The measured iteration time must be a positive number of seconds (not “-3”).');
    assert.equal((await pageScenario(p)).calibration, undefined, 'nothing added');
    // A run of PP 16 on 64 GPUs with TP 8: the engine refuses it, said at the calibration.
    await p.fill('#f-pp', '16');
    await settle(p);
    await p.fill('#cal-measured', '30');
    await p.click('#cal-add-run');
    await p.fill('#f-pp', '4');
    await settle(p);
    const error = await p.textContent('[data-path="calibration"] > .error');
    assert.match(error, /calibration\.runs\[0\]|measured run/i);
    assert.match(await p.textContent('#status'), /Invalid plan/);
    await p.close();
  });

  test('wrong input is refused with the reason: another GPU\'s nccl-tests, a time 3× off; a link says its runs stayed behind', async () => {
    const p = await open(`${fx.site.url}#${DEFAULT}`);
    // nccl-tests whose ranks ran on A100s, pasted for a cluster of H100s: no link fitted, both named.
    const a100 = readFileSync(join(ROOT, 'tests', 'engine', 'fixtures', 'nccl-tests', 'reduce_scatter_perf-a100-old-format.txt'), 'utf8');
    await p.fill('#cal-nccl', a100);
    await p.click('#cal-nccl-fit');
    await p.waitForFunction(() => document.querySelector('#cal-status').classList.contains('error'));
    assert.match(await p.textContent('#cal-status'),
      /^Not fitted: nccl-tests ran on NVIDIA A100-SXM4-80GB \(a100\), and this cluster's GPU is h100-sxm5-80gb: /);
    assert.equal((await pageScenario(p)).calibration, undefined, 'no link fitted');
    // With a plan the engine refuses on show (TP 3: no resolved cluster), the cluster is still
    // H100s: refused the same (it was fitted without a word).
    const refused = await p.textContent('#cal-status');
    await p.fill('#f-tp', '3');
    await settle(p);
    await p.evaluate(() => { document.querySelector('#cal-status').textContent = ''; });
    await p.click('#cal-nccl-fit');
    await p.waitForFunction(() => document.querySelector('#cal-status').textContent !== '');
    assert.equal(await p.textContent('#cal-status'), refused, 'an invalid plan on show');
    assert.equal((await pageScenario(p)).calibration, undefined, 'no link fitted');
    await p.fill('#f-tp', '8');
    await settle(p);
    // The same output on an A100 cluster fits (the check is of the GPU, not of the file).
    const q = await open(`${fx.site.url}#v=2&model=llama3-8b&node=dgx-a100&nodes=1&tp=8&gbs=64`);
    await q.fill('#cal-nccl', a100);
    await q.click('#cal-nccl-fit');
    await q.waitForFunction(() => /^Fitted the link inside a node/.test(document.querySelector('#cal-status').textContent));
    await q.close();

    // A measured iteration 3× off the estimate either way: a slip (milliseconds, a whole run), refused.
    const predicted = (await metrics(p)).iteration_time_s;
    const shown = `the ${+predicted.toPrecision(3)} s Stepcast estimates for the plan on show; a measured iteration within 3× either way is taken.`;
    for (const [v, off] of [[predicted * 3.2, '3.2 times'], [predicted / 3.2, '1/3.2 of'], [1e-300, `1/${+(predicted / 1e-300).toPrecision(3)} of`]]) {
      await p.fill('#cal-measured', String(v));
      await p.click('#cal-add-run');
      assert.equal(await p.textContent('#cal-status'), `Not added: ${v} s is ${off} ${shown} Check that it is one iteration of this plan, in seconds.`);
      assert.equal(await p.getAttribute('#cal-status', 'role'), 'alert');
    }
    assert.equal((await pageScenario(p)).calibration, undefined, 'no run added');
    assert.equal(await p.isVisible('#calibrated'), false);
    // Within 3×: added and fitted.
    await p.fill('#cal-measured', String(+(predicted * 2.5).toPrecision(4)));
    await p.click('#cal-add-run');
    await settle(p);
    assert.equal((await pageScenario(p)).calibration.runs.length, 1);
    assert.equal(await p.isVisible('#cal-runs-left'), false, 'the runs are on show');

    // Opened from its link: the fitted scale came, the run did not, and the page says so.
    const r = await open(await linked(p));
    assert.equal(await r.isVisible('#calibrated'), true);
    assert.equal((await pageScenario(r)).calibration.runs, undefined);
    assert.match(await r.textContent('#cal-runs-left'),
      /^The link holds the scales fitted to your measured runs \(compute ×[\d.]+\), not the runs themselves: links stay short\. Add the runs again to refit, or Clear to drop the scales\.$/);
    await r.click('#cal-clear');
    await settle(r);
    assert.equal(await r.isVisible('#cal-runs-left'), false, 'gone with the scales');
    await r.close();
    await p.close();
  });

  test('a run whose plan Stepcast predicts out of memory: fitted, with a warning beside the runs', async () => {
    const p = await open(`${fx.site.url}#${DEFAULT}`);
    assert.equal(await p.isVisible('#cal-warnings'), false);
    // Llama 3 70B with TP 1 and PP 1: ~300 GB of weights, gradients and optimizer state per GPU.
    await p.fill('#f-tp', '1');
    await p.fill('#f-pp', '1');
    await settle(p);
    await p.fill('#cal-measured', '60');
    await p.click('#cal-add-run');
    await p.fill('#f-tp', '8');
    await p.fill('#f-pp', '4');
    await settle(p);
    assert.equal(await p.isVisible('#calibrated'), true, 'the run was fitted');
    assert.equal(await p.isVisible('#cal-warnings'), true);
    assert.match(await p.textContent('#cal-warnings'),
      /^calibration\.runs\[0\]: Stepcast predicts this plan does not fit in memory \(stage 0 needs \d+\.\d GiB of 80\.0 GiB\)/);
    await p.click('#cal-clear');
    await settle(p);
    assert.equal(await p.isVisible('#cal-warnings'), false, 'gone with the calibration');
    await p.close();
  });
});
