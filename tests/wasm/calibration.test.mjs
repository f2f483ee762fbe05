// Calibration (issue 15): the module's ncclLink() fits the link `stepcast calibrate --nccl-tests`
// prints, and refuses what it refuses; a scenario with measured runs estimates as the CLI does,
// and compactCalibration() keeps the fitted scales (no runs) so that a link built from it gives
// the same estimate.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { CLI, ROOT, cliEstimate, cliRun, exampleText, jsonDiff, loadWasm, requireBuilt } from './common.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

let wasm;
before(async () => { wasm = await loadWasm(); });

const FIXTURES = join(ROOT, 'tests', 'engine', 'fixtures', 'nccl-tests');

describe('calibration: WebAssembly equals the command line', () => {
  for (const name of ['all_reduce_perf-dgx-h100-8gpu.txt', 'all_reduce_perf-2node-ib-ndr.txt']) {
    test(`ncclLink on ${name}`, () => {
      const cli = cliRun(['calibrate', '--nccl-tests', join(FIXTURES, name)]);
      assert.equal(cli.status, 0, cli.stderr);
      const expected = JSON.parse(cli.stdout);
      const mine = JSON.parse(wasm.ncclLink(JSON.stringify({
        files: [{ name, text: readFileSync(join(FIXTURES, name), 'utf8') }] })));
      assert.equal(mine.error, undefined, JSON.stringify(mine.error));
      for (const key of ['scope', 'busbw_GBps', 'allreduce_busbw_GBps', 'half_peak_bytes', 'latency_us'])
        assert.equal(mine.link[key], expected[key], key);
      assert.ok(mine.checks[0].max_busbw_error < 0.05);
    });
  }

  test('ncclLink refuses text that is not nccl-tests output, with one line', () => {
    const r = JSON.parse(wasm.ncclLink(JSON.stringify({ files: [{ name: 'x', text: 'hello' }] })));
    assert.equal(r.error.path, 'files[0]');
    assert.match(r.error.message, /^not nccl-tests output/);
    const bad = JSON.parse(wasm.ncclLink('{"files": 3}'));
    assert.equal(bad.error.code, 'parse_error');
  });

  test('ncclLink refuses output of another GPU than the cluster\'s, as calibrate --gpu does', () => {
    const name = 'reduce_scatter_perf-a100-old-format.txt';
    const text = readFileSync(join(FIXTURES, name), 'utf8');
    const cli = cliRun(['calibrate', '--nccl-tests', join(FIXTURES, name), '--gpu', 'h100-sxm5-80gb']);
    assert.notEqual(cli.status, 0);
    const r = JSON.parse(wasm.ncclLink(JSON.stringify({ files: [{ name, text }], gpu: 'h100-sxm5-80gb' })));
    assert.equal(r.error.path, 'files[0]');
    assert.equal(r.error.code, 'invalid_cluster');
    assert.equal(r.error.message, 'nccl-tests ran on NVIDIA A100-SXM4-80GB (a100), and this cluster\'s GPU is h100-sxm5-80gb: ' +
      'a link measured on other GPUs does not calibrate these');
    assert.ok(cli.stderr.includes(r.error.message), cli.stderr);
    // Its own GPU (a preset id or a custom GPU's name) fits it.
    for (const gpu of ['a100-sxm4-80gb', 'NVIDIA A100 80GB']) {
      const ok = JSON.parse(wasm.ncclLink(JSON.stringify({ files: [{ name, text }], gpu })));
      assert.equal(ok.error, undefined, `${gpu}: ${JSON.stringify(ok.error)}`);
    }
  });

  test('gemmFit on a GEMM table equals `stepcast calibrate --gemm`, on the cluster\'s GPU', () => {
    const file = join(ROOT, 'tests', 'engine', 'fixtures', 'gemm', 'h100-bf16-fp8.csv');
    const cli = cliRun(['calibrate', '--gemm', file, '--gpu', 'h100-sxm5-80gb']);
    assert.equal(cli.status, 0, cli.stderr);
    const doc = JSON.parse(exampleText('llama3-70b_dgx-h100x8'));
    const mine = JSON.parse(wasm.gemmFit(JSON.stringify({ text: readFileSync(file, 'utf8'), scenario: doc })));
    assert.equal(mine.error, undefined, JSON.stringify(mine.error));
    assert.deepEqual(mine.gemm, JSON.parse(cli.stdout));
    // The fixture was made at 0.70 and 0.55 with 8 us per kernel, 2 % noise.
    assert.ok(Math.abs(mine.gemm.gemm_efficiency - 0.70) < 0.01, `${mine.gemm.gemm_efficiency}`);
    assert.ok(Math.abs(mine.gemm.fp8_gemm_efficiency - 0.55) < 0.01, `${mine.gemm.fp8_gemm_efficiency}`);
    assert.equal(mine.rows, 16);
    assert.ok(mine.max_time_error < 0.03, `${mine.max_time_error}`);
    assert.match(mine.gpu, /H100/);
    // In the scenario, the report says what moved from the preset.
    doc.calibration = { gemm: mine.gemm };
    const report = JSON.parse(wasm.estimate(JSON.stringify(doc)));
    assert.equal(report.calibration.gemm.gemm_efficiency.value, mine.gemm.gemm_efficiency);
    assert.ok(Math.abs(report.calibration.gemm.gemm_efficiency.preset - mine.preset.gemm_efficiency) < 1e-4);
  });

  test('gemmFit refuses a table it cannot read and a cluster of two GPU types', () => {
    const doc = JSON.parse(exampleText('llama3-70b_dgx-h100x8'));
    const bad = JSON.parse(wasm.gemmFit(JSON.stringify({ text: 'm,n,k,dtype,tflops\n1024,1024,1024,bf16,-3\n', scenario: doc })));
    assert.equal(bad.error.path, 'text');
    assert.match(bad.error.message, /^line 2: /);
    const mixed = { ...doc, cluster: { groups: [{ node: 'dgx-a100', nodes: 1 }, { node: 'dgx-h100', nodes: 1 }] } };
    const two = JSON.parse(wasm.gemmFit(JSON.stringify({ text: 'm,n,k,dtype,tflops\n', scenario: mixed })));
    assert.match(two.error.message, /mixes/);
    assert.equal(JSON.parse(wasm.gemmFit('{"text": 3}')).error.code, 'parse_error');
  });

  test('a measured run: estimate, then the compact calibration and its link', () => {
    const doc = JSON.parse(exampleText('llama3-70b_dgx-h100x8'));
    doc.calibration = { runs: [{ plan: doc.plan, measured_iteration_s: 45 }] };
    const text = JSON.stringify(doc);
    const cli = cliEstimate(text, { timeline: false });
    assert.equal(cli.status, 0, cli.stderr);
    const mine = JSON.parse(wasm.estimate(text));
    assert.equal(mine.error, undefined);
    assert.deepEqual(jsonDiff(cli.report.calibration, mine.calibration), []);
    assert.ok(Math.abs(mine.iteration_time_s / 45 - 1) < 1e-6);
    const compact = JSON.parse(wasm.compactCalibration(text)).scenario;
    assert.equal(compact.calibration.runs, undefined);
    const link = JSON.parse(wasm.toLink(JSON.stringify({ scenario: compact }), 'http://localhost:8080/')).link;
    const back = JSON.parse(wasm.fromLink(link)).scenario;
    const again = JSON.parse(wasm.estimate(JSON.stringify(back)));
    assert.ok(Math.abs(again.iteration_time_s / 45 - 1) < 1e-5);
  });
});
