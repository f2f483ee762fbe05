// The page's report parts (web/src/cards/parts.js) from the module's reportSchema(): the
// breakdown's parts and the memory's, in the engine's table order with its labels, each a key
// the module's reports hold, and the page's own extras (the input a part needs, a memory part's
// tooltip) only for parts the engine has.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';

import { memoryParts, memorySums, parts, setReportSchema } from '../../web/src/cards/parts.js';
import { TERMS } from '../../web/src/ui/terms.js';
import { exampleText, loadWasm } from './common.mjs';

let engine;
let schema;

before(async () => {
  engine = await loadWasm();
  schema = JSON.parse(engine.reportSchema());
  setReportSchema(schema);
});

test('the breakdown\'s parts are the engine\'s, in its order, with its labels', () => {
  assert.deepEqual(parts().map(([name, label]) => [name, label]), schema.breakdown_s.map((k) => [k.name, k.label]));
  assert.deepEqual(parts().slice(0, 3).map(([, label]) => label), ['Forward', 'Backward', 'Recompute']);
  assert.deepEqual(parts().filter(([, , needs]) => needs), [['ep_comm', 'Expert comm', 'model.moe'],
    ['offload', 'Offload copies', 'plan.cpu_offloading_num_layers']]);
  // Every part is a key of a real report, and the parts add up to its iteration time.
  const r = JSON.parse(engine.estimate(exampleText('llama3-70b_dgx-h100x8')));
  assert.deepEqual(parts().map(([name]) => name).sort(), Object.keys(r.breakdown_s).sort());
  const sum = parts().reduce((s, [name]) => s + r.breakdown_s[name], 0);
  assert.ok(Math.abs(sum - r.iteration_time_s) <= 1e-9 * r.iteration_time_s, `${sum} vs ${r.iteration_time_s}`);
});

test('the memory\'s parts are the keys before their total, each with a tooltip', () => {
  assert.deepEqual(memoryParts().map(([name, label]) => [name, label]), [
    ['weights', 'Weights'], ['gradients', 'Gradients'], ['optimizer', 'Optimizer state'],
    ['activations', 'Activations'], ['moe_dispatch', 'MoE dispatch'], ['ep_overlap', 'EP overlap'],
    ['wgrad_dummies', 'Dummy weight grads'], ['allocator', 'Allocator'], ['userbuffers', 'TE userbuffers'], ['deepep', 'DeepEP buffers'],
    ['nccl', 'NCCL buffers'], ['other', 'Other'],
  ]);
  for (const [name, , term] of memoryParts()) assert.ok(TERMS[term], `${name}: a term the page explains`);
  const r = JSON.parse(engine.estimate(exampleText('llama3-70b_dgx-h100x8')));
  for (const s of r.stages) {
    const sum = memoryParts().reduce((t, [name]) => t + s.memory_bytes[name], 0);
    assert.ok(Math.abs(sum - s.memory_bytes.total) <= 1e-12 * s.memory_bytes.total, `stage ${s.index}: the parts are the total`);
  }
});

test('every breakdown part has a term the page explains (the card draws a "?" for each part it shows)', () => {
  // A part without one threw while the breakdown drew, and no card after it was drawn (the
  // offload copies of a plan with cpu_offloading_num_layers, found by tests/browser/export.test.mjs).
  for (const [name] of parts()) assert.ok(TERMS[name], `${name}: a term the page explains`);
});

test('the memory\'s sums after the parts: total, allocated, reserved, capacity, offloaded, optimizer_offloaded (the headroom aside)', () => {
  assert.deepEqual(memorySums().map(([name]) => name),
    ['total', 'allocated', 'reserved', 'capacity', 'offloaded', 'optimizer_offloaded']);
});
