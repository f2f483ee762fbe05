// Import and export: the WebAssembly module's importHfConfig, importMegatronArgs,
// importTorchtitan and exportPlan give exactly what `stepcast import hf-config`, `stepcast import
// megatron-args`, `stepcast import torchtitan` and `stepcast export KIND` print, on the published
// configs of tests/fixtures/hf-config, a launch script, torchtitan's Llama 3 70B job config and
// the example scenarios; and they refuse what the CLI refuses, with the same message.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { CLI, ROOT, cliErrorLine, exampleText, loadWasm, requireBuilt } from './common.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

let wasm;
before(async () => { wasm = await loadWasm(); });

const FIXTURES = join(ROOT, 'tests', 'fixtures');

/** `stepcast ARGS... -` with `input` on stdin: {status, stdout, stderr}. */
function cli(args, input) {
  const r = spawnSync(CLI, [...args, '-'], { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  return r;
}

describe('import hf-config: WebAssembly equals the CLI', () => {
  const dir = join(FIXTURES, 'hf-config');
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    test(file, () => {
      const text = readFileSync(join(dir, file), 'utf8');
      const r = cli(['import', 'hf-config'], text);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(wasm.importHfConfig(text)), JSON.parse(r.stdout));
    });
  }
  test('refusals carry the CLI message', () => {
    for (const text of ['{"architectures": ["BertForMaskedLM"]}', '{"architectures": [',
      '{"architectures": ["LlamaForCausalLM"], "hidden_size": "4096"}']) {
      const r = cli(['import', 'hf-config'], text);
      assert.equal(r.status, 2);
      const mine = JSON.parse(wasm.importHfConfig(text));
      assert.equal(`error: ${mine.error.message}`, r.stderr.trim());
    }
  });
});

describe('import megatron-args: WebAssembly equals the CLI', () => {
  test('a torchrun launch script', () => {
    const text = readFileSync(join(FIXTURES, 'megatron-args', 'llama3-8b-torchrun.sh'), 'utf8');
    const r = cli(['import', 'megatron-args'], text);
    assert.equal(r.status, 0, r.stderr);
    const mine = JSON.parse(wasm.importMegatronArgs(text));
    assert.deepEqual(mine, JSON.parse(r.stdout));
    assert.equal(mine.scenario.plan.tp, 2);
    assert.ok(mine.ignored.includes('--lr 3e-4'));
  });
  test('refusals carry the CLI message', () => {
    for (const text of ['--num-layers 4', '--num-layers four', "--data-path 'open"]) {
      const r = cli(['import', 'megatron-args'], text);
      assert.equal(r.status, 2);
      const mine = JSON.parse(wasm.importMegatronArgs(text));
      assert.equal(`error: ${mine.error.message}`, r.stderr.trim());
    }
  });
});

describe('import torchtitan: WebAssembly equals the CLI', () => {
  const text = readFileSync(join(FIXTURES, 'torchtitan', 'llama3_70b.toml'), 'utf8');
  test('torchtitan\'s Llama 3 70B job config on 8 DGX A100', () => {
    const r = cli(['import', 'torchtitan', '--node', 'dgx-a100', '--nodes', '8', '--format', 'json'], text);
    assert.equal(r.status, 0, r.stderr);
    const mine = JSON.parse(wasm.importTorchtitan(text, JSON.stringify({ node: 'dgx-a100', nodes: 8 })));
    assert.deepEqual(mine, JSON.parse(r.stdout));
    // FSDP over the 64 GPUs TP 8 leaves (shard degree -1), 8 samples a rank: 64 a step.
    assert.deepEqual([mine.scenario.model, mine.scenario.plan.tp, mine.scenario.plan.dp, mine.scenario.plan.global_batch],
      ['llama3-70b', 8, 8, 64]);
  });
  test('refusals carry the CLI message', () => {
    const cases = [[text, []], ['[model\nname = "llama3"', ['--nodes', '8']],
      [text.replace('name = "llama3"', 'name = "gpt5"'), ['--nodes', '8']], [text, ['--node', 'dgx-z9', '--nodes', '8']]];
    for (const [toml, flags] of cases) {
      const r = cli(['import', 'torchtitan', ...flags], toml);
      assert.equal(r.status, 2, flags.join(' '));
      const options = {};
      for (let i = 0; i < flags.length; i += 2) options[flags[i].slice(2)] = flags[i] === '--nodes' ? Number(flags[i + 1]) : flags[i + 1];
      const mine = JSON.parse(wasm.importTorchtitan(toml, JSON.stringify(options)));
      assert.equal(`error: ${mine.error.message}`, r.stderr.trim());
    }
  });
});

describe('exportPlan: WebAssembly equals stepcast export', () => {
  const scenarios = ['llama3-70b_dgx-h100x8', 'qwen3-30b-a3b'];
  for (const name of scenarios) {
    test(`torchtitan, ${name}`, () => {
      const text = exampleText(name);
      const r = cli(['export', 'torchtitan'], text);
      assert.equal(r.status, 0, r.stderr);
      const mine = JSON.parse(wasm.exportPlan(text, 'torchtitan'));
      assert.equal(mine.text, r.stdout);
      assert.match(mine.text, /^\[parallelism\]$/m);
    });
  }
  for (const kind of ['megatron-args', 'bridge-recipe', 'torchrun']) {
    for (const name of scenarios) {
      test(`${kind}, ${name}`, () => {
        const text = exampleText(name);
        const r = cli(['export', kind], text);
        assert.equal(r.status, 0, r.stderr);
        const mine = JSON.parse(wasm.exportPlan(text, kind));
        assert.equal(mine.text, r.stdout);
        assert.match(mine.text, /tensor.model.parallel.size/);
      });
    }
  }
  test('its Megatron arguments import back into the same plan', () => {
    const text = exampleText('llama3-70b_dgx-h100x8');
    const args = JSON.parse(wasm.exportPlan(text, 'torchrun')).text;
    const back = JSON.parse(wasm.importMegatronArgs(args)).scenario;
    // resolve(): {"scenario": every key filled in, "model": the model's numbers, ...}.
    const resolvedOriginal = JSON.parse(wasm.resolve(text));
    const resolvedAgain = JSON.parse(wasm.resolve(JSON.stringify(back)));
    const original = resolvedOriginal.scenario;
    const again = resolvedAgain.scenario;
    assert.deepEqual(again.cluster, original.cluster);
    for (const key of ['tp', 'pp', 'dp', 'cp', 'vpp', 'micro_batch', 'global_batch', 'recompute',
      'sequence_parallel', 'distributed_optimizer', 'precision', 'tp_comm_overlap']) {
      assert.deepEqual(again.plan[key], original.plan[key], key);
    }
    for (const key of ['layers', 'hidden', 'heads', 'kv_heads', 'ffn_hidden', 'vocab', 'seq_len']) {
      assert.equal(resolvedAgain.model[key], resolvedOriginal.model[key], key);
      assert.ok(resolvedOriginal.model[key] > 0, key);
    }
  });
  test('refusals: an unknown kind, an invalid scenario', () => {
    assert.match(JSON.parse(wasm.exportPlan(exampleText('qwen3-30b-a3b'), 'slurm')).error.message,
      /kind must be megatron-args, bridge-recipe, torchrun or torchtitan/);
    const bad = '{"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 1}, "plan": {"tp": 3, "global_batch": 8}}';
    const r = cli(['export', 'megatron-args'], bad);
    assert.equal(r.status, 2);
    assert.equal(cliErrorLine(JSON.parse(wasm.exportPlan(bad, 'megatron-args')).error), r.stderr.trim());
  });
});
