// The traffic matrix: the WebAssembly module's traffic() gives exactly `stepcast traffic
// --format json` (the same cells, placement, load, ranges and curves, to 1e-9 relative), at GPU
// and node level, for a dense plan, a non-default rank order, a MoE plan and two cluster groups;
// and the same refusals (a bad rank order, an invalid plan, replica sets on several groups).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, test } from 'node:test';

import { CLI, cliErrorLine, exampleText, jsonDiff, loadWasm, requireBuilt, withPlan } from './common.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

let wasm;
before(async () => { wasm = await loadWasm(); });


/** `stepcast traffic - [--level L] --format json`: {status, json, stderr}. */
function cliTraffic(text, level) {
  const r = spawnSync(CLI, ['traffic', '-', ...(level ? ['--level', level] : []), '--format', 'json'],
    { input: text, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return { status: r.status, stderr: r.stderr, json: r.status === 0 ? JSON.parse(r.stdout) : undefined };
}

const cases = [
  ['the default example (Llama 3 70B on 8 DGX H100)', exampleText('llama3-70b_dgx-h100x8'), undefined],
  ['the default example, node level', exampleText('llama3-70b_dgx-h100x8'), 'node'],
  ['TP across nodes (rank order dp first)', withPlan(exampleText('llama3-70b_dgx-h100x8'), { rank_order: 'dp-tp-cp-ep-pp' }), undefined],
  ['Qwen3-30B-A3B with EP 8', exampleText('qwen3-30b-a3b'), undefined],
  ['GPT-3 175B on 128 DGX A100 (node level by default)', exampleText('gpt3-175b_dgx-a100x128'), undefined],
  ['stages on two groups (A100 and H100 nodes)', exampleText('llama3-8b_a100-and-h100_stages'), undefined],
];

describe('traffic: WebAssembly equals stepcast traffic --format json', () => {
  for (const [name, text, level] of cases) {
    test(name, () => {
      const cli = cliTraffic(text, level);
      assert.equal(cli.status, 0, cli.stderr);
      const mine = JSON.parse(wasm.traffic(text, JSON.stringify(level ? { level } : {})));
      assert.equal(mine.error, undefined, JSON.stringify(mine.error));
      assert.deepEqual(jsonDiff(cli.json, mine), [], name);
      assert.ok(cli.json.total_bytes > 0);
    });
  }

  test('refusals: the same error from both', () => {
    const bad = [
      withPlan(exampleText('llama3-70b_dgx-h100x8'), { rank_order: 'tp-tp-ep-dp-pp' }),
      withPlan(exampleText('llama3-70b_dgx-h100x8'), { tp: 3 }),
      exampleText('llama3-70b_a100-and-h100_replicas'),
    ];
    for (const text of bad) {
      const cli = cliTraffic(text);
      assert.equal(cli.status, 2, 'exit 2');
      const mine = JSON.parse(wasm.traffic(text, '{}'));
      assert.ok(mine.error, 'the module refuses it too');
      assert.equal(cliErrorLine(mine.error), cli.stderr.trim().split('\n')[0]);
    }
    const level = JSON.parse(wasm.traffic(exampleText('llama3-8b_dgx-h100x1'), '{"level": "rack"}'));
    assert.match(level.error.message, /level must be gpu, node or auto/);
  });
});
