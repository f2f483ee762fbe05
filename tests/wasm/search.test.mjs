// The plan search: the WebAssembly module's search() gives exactly `stepcast search --format json`
// (the same plans in the same order, the same numbers to the last bit, the same counts), and the
// same refusals (several groups, an invalid scenario).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { CLI, cliSearch, exampleText, loadWasm, requireBuilt, withPlan } from './common.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

let wasm;
before(async () => { wasm = await loadWasm(); });


// Single-group examples and a few variants (a ZeRO stage, fp8, another top count).
const cases = [
  ['the default example (Llama 3 70B on 8 DGX H100)', exampleText('llama3-70b_dgx-h100x8'), 10],
  ['Llama 3 8B on one DGX H100', exampleText('llama3-8b_dgx-h100x1'), 10],
  ['custom model on L40S PCIe', exampleText('custom-7b_l40s-pcie'), 10],
  ['GPT-3 175B on 128 DGX A100', exampleText('gpt3-175b_dgx-a100x128'), 10],
  ['the OOM example (few plans fit)', exampleText('_oom'), 10],
  ['Llama 3.1 405B fp8 (the rules refuse most plans)', exampleText('405b'), 10],
  ['ZeRO-3 kept, top 25', withPlan(exampleText('llama3-8b_dgx-h100x1'), { zero_stage: 3 }), 25],
  ['fp16, top 1', withPlan(exampleText('llama3-70b_dgx-h100x8'), { precision: 'fp16' }), 1],
];

describe('search: WebAssembly equals stepcast search --format json', () => {
  for (const [name, text, top] of cases) {
    test(name, () => {
      const cli = cliSearch(text, top);
      assert.equal(cli.status, 0, cli.stderr);
      const t0 = performance.now();
      const mine = JSON.parse(wasm.search(text, top));
      const ms = performance.now() - t0;
      assert.deepStrictEqual(mine, cli.result, 'the module\'s search differs from the CLI\'s');
      assert.ok(mine.best.length <= top);
      assert.ok(mine.evaluated >= mine.out_of_memory);
      for (let i = 1; i < mine.best.length; i++)
        assert.ok(mine.best[i - 1].iteration_time_s <= mine.best[i].iteration_time_s, 'fastest first');
      console.log(`${name}: ${mine.evaluated} plans in ${ms.toFixed(1)} ms (WebAssembly)`);
    });
  }

  test('a cluster of several groups is refused, as by the CLI', () => {
    for (const part of ['_stages', '_replicas']) {
      const text = exampleText(part);
      const cli = cliSearch(text);
      assert.equal(cli.status, 2);
      const r = JSON.parse(wasm.search(text, 10));
      assert.equal(r.error.path, 'cluster.groups');
      assert.equal(`error: ${r.error.message}`, cli.stderr.trim());
    }
  });

  test('a plan that breaks a rule the search varies is searched around, with its error', () => {
    const text = withPlan(exampleText('llama3-70b_dgx-h100x8'), { tp: 16 });
    const cli = cliSearch(text);
    assert.equal(cli.status, 0, cli.stderr);
    const r = JSON.parse(wasm.search(text, 10));
    assert.deepEqual(r, cli.result);
    assert.equal(r.baseline_error.path, 'plan.tp');
    assert.equal(r.baseline_s, 0);
    assert.ok(r.best.length > 0);
  });

  test('what cannot be searched gives the CLI\'s error, with its path', () => {
    // Keys that do not read (an unknown model) and rules no plan can satisfy (bf16 on V100).
    for (const [text, path] of [
      [JSON.stringify({ ...JSON.parse(exampleText('llama3-70b_dgx-h100x8')), model: 'gpt-9' }), 'model'],
      [JSON.stringify({ model: 'gpt3-1.3b', cluster: { node: 'dgx-1-v100', nodes: 1 },
        plan: { global_batch: 8, precision: 'bf16' } }), 'plan.precision'],
    ]) {
      const cli = cliSearch(text);
      assert.equal(cli.status, 2);
      const r = JSON.parse(wasm.search(text, 10));
      assert.equal(r.error.path, path);
      assert.equal(`error: ${r.error.message}`, cli.stderr.trim());
    }
    const bad = JSON.parse(wasm.search('{"model": ', 10));
    assert.equal(bad.error.code, 'parse_error');
  });
});
