// The page's wording of the engine's problems (web/src/ui/plain.js), fed the engine's real errors
// from the WebAssembly module (resolve() of scenarios that break each rule) and its own schema:
// each rule a first-time user meets, said with the controls' labels and the numbers, keyed on the
// error's rule id and values. A rule renamed or a value the page reads dropped in the engine
// fails here, not silently on the page.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';

import { WORDED_RULES, plainProblem } from '../../web/src/ui/plain.js';
import { setSchema } from '../../web/src/scenario/schema.js';
import { loadWasm } from './common.mjs';

let engine;
const met = new Set();

before(async () => {
  engine = await loadWasm();
  setSchema(JSON.parse(engine.schema()));
});

const H100 = { node: 'dgx-h100', nodes: 8 };
const scenario = (plan, { model = 'llama3-70b', cluster = H100, ...more } = {}) =>
  ({ model, cluster, plan: { global_batch: 512, ...plan }, ...more });

/** The engine's problems with a scenario (resolve()), each also in the page's words. */
function problems(s) {
  const r = JSON.parse(engine.resolve(JSON.stringify(s)));
  assert.ok(Array.isArray(r.errors), `the engine refuses ${JSON.stringify(s)}`);
  for (const e of r.errors) if (e.rule) met.add(e.rule);
  return r.errors.map((e) => ({ engine: e, page: plainProblem(e) }));
}
/** The one problem at `path` (and, when given, of rule `rule`), in the page's words. */
function at(s, path, rule) {
  const found = problems(s).filter(({ engine: e }) => e.path === path && (!rule || e.rule === rule));
  assert.equal(found.length > 0, true, `a problem at ${path}${rule ? ` (${rule})` : ''}`);
  return found[0].page;
}

test('divisibility rules name the control, its value and what it divides', () => {
  const tp3 = problems(scenario({ tp: 3 })).filter(({ engine: e }) => e.rule === 'divides').map(({ page }) => page);
  assert.deepEqual(tp3.map((p) => p.message), [
    'TP 3 does not divide the 64 attention heads',
    'TP 3 does not divide the 8 KV heads',
    'TP 3 does not divide the FFN size 28,672',
  ]);
  assert.equal(tp3[0].hint, 'TP 1, 2, 4 or 8', 'the sizes that divide the model, within a node');
  const ep = at(scenario({ ep: 3, global_batch: 48 }, { model: 'mixtral-8x7b', cluster: { node: 'dgx-h100', nodes: 3 } }), 'plan.ep', 'divides');
  assert.equal(ep.message, 'EP 3 does not divide the 8 experts');
  assert.equal(ep.hint, 'EP 1, 2, 4 or 8');
  const custom = { name: 'c', layers: 80, hidden: 8192, heads: 50, ffn_hidden: 28672, vocab: 128256, seq_len: 4096,
    ffn_type: 'swiglu', position: 'rope', tied_embeddings: false };
  assert.equal(at(scenario({ tp: 1 }, { model: custom }), 'model.hidden', 'divides').message,
    'Heads 50 does not divide the hidden size 8,192');
  assert.equal(at(scenario({ tp: 8, global_batch: 500, micro_batch: 3, replicas: [{ group: 0, count: 8 }] }), 'plan.global_batch', 'divides').message,
    'Micro-batch 3 does not divide the global batch 500');
});

test('layers over the pipeline: the split, and each split Megatron could take instead', () => {
  const pp3 = at(scenario({ tp: 8, pp: 3 }, { cluster: { node: 'dgx-h100', nodes: 3 } }), 'plan.pp', 'layer_split');
  assert.equal(pp3.message, 'PP 3 does not divide the 80 layers into equal stages');
  // 81 = 80 layers + the loss divides by 3; 26, 27 and 27 layers would too.
  assert.equal(pp3.hint, 'PP 1, 2, 4, 5, 8, 10, 16, 20 or 40; turn on “Loss counts as a layer”; ' +
    'Layers on the first stage 26 and Layers on the last stage 27 (27 on each other stage)');
  const vpp3 = at(scenario({ tp: 8, pp: 4, vpp: 3 }), 'plan.vpp', 'layer_split');
  assert.equal(vpp3.message, 'PP 4 × VPP 3 = 12 model chunks do not divide the 80 layers evenly');
  // The hint in the unit of the control that was changed: VPP values at this PP.
  assert.match(vpp3.hint, /^VPP 1, 2, 4, 5 or 10 at PP 4;/);
  // DeepSeek-V3's 61 layers on 8 stages: only the lighter ends split them.
  const v3 = at(scenario({ tp: 8, pp: 8, ep: 8 }, { model: 'deepseek-v3', cluster: { node: 'dgx-h100', nodes: 64 } }), 'plan.pp', 'layer_split');
  assert.equal(v3.hint, 'PP 1 or 61; Layers on the first stage 6 and Layers on the last stage 7 (8 on each other stage)');
  // Each split a click can set, as the page's buttons do.
  assert.deepEqual(pp3.fixes.map((f) => f.set), [{ 'plan.first_stage_layers': 26, 'plan.last_stage_layers': 27 }, { 'plan.loss_in_split': true }]);
  assert.deepEqual(v3.fixes.map((f) => f.set), [{ 'plan.first_stage_layers': 6, 'plan.last_stage_layers': 7 }]);
  // At VPP 4 only Megatron's layout splits them, as NVIDIA's DeepSeek-V3 recipe does.
  const v3vpp4 = at(scenario({ tp: 8, pp: 8, vpp: 4, ep: 8 }, { model: 'deepseek-v3', cluster: { node: 'dgx-h100', nodes: 64 } }), 'plan.vpp', 'layer_split');
  assert.equal(v3vpp4.hint, 'PP × VPP 1 or 61; Pipeline layout Et|(tt|)*30mL (as NVIDIA\'s recipes split such models)');
  assert.deepEqual(v3vpp4.fixes.map((f) => f.set), [{ 'plan.pipeline_layout': 'Et|(tt|)*30mL' }]);
  // The first and last stage layers of PP 8 (6 and 7), then VPP 4: a stage of 6 layers is no
  // whole number of 4-layer chunks, and the layout that splits the 61 layers at PP 8 × VPP 4
  // replaces them (Megatron takes a layout alone: the button clears them).
  const fsl = at(scenario({ tp: 8, pp: 8, vpp: 4, ep: 8, first_stage_layers: 6, last_stage_layers: 7 },
    { model: 'deepseek-v3', cluster: { node: 'dgx-h100', nodes: 64 } }), 'plan.first_stage_layers', 'stage_chunks');
  assert.equal(fsl.message, 'A stage of 6 layers does not split into VPP 4 chunks');
  const one = at(scenario({ tp: 4, pp: 16, vpp: 2, ep: 8, first_stage_layers: 1, last_stage_layers: 4 },
    { model: 'deepseek-v3', cluster: { node: 'dgx-h100', nodes: 32 } }), 'plan.first_stage_layers', 'stage_chunks');
  assert.equal(one.message, 'A stage of 1 layer does not split into VPP 2 chunks');
  assert.equal(fsl.hint, 'in place of Layers on the first stage and Layers on the last stage: PP × VPP 1 or 61; ' +
    'Pipeline layout Et|(tt|)*30mL (as NVIDIA\'s recipes split such models)');
  assert.deepEqual(fsl.fixes.map((f) => f.set),
    [{ 'plan.first_stage_layers': undefined, 'plan.last_stage_layers': undefined, 'plan.pipeline_layout': 'Et|(tt|)*30mL' }]);
  // With the embedding and the loss counted, the engine's own words, its paths as labels.
  const counted = at(scenario({ tp: 8, pp: 3, embedding_in_split: true, loss_in_split: true }, { cluster: { node: 'dgx-h100', nodes: 3 } }), 'plan.pp', 'layer_split');
  assert.equal(counted.message, 'Layers 80 plus the embedding and loss counted as layers (82) must be divisible by PP × VPP 3');
});

test('GPU counts and the global batch: whole replicas, with node counts that work when TP fits the nodes', () => {
  const seven = at(scenario({ tp: 8, pp: 4 }, { cluster: { node: 'dgx-h100', nodes: 7 } }), 'plan.dp', 'whole_replicas');
  assert.equal(seven.message, "The cluster's 56 GPUs do not split into whole model replicas of TP 8 × PP 4 = 32 GPUs");
  assert.equal(seven.hint, '4 or 8 nodes, or a TP × PP that divides 56 GPUs', 'from the engine: 32 / gcd(32, 8) = 4 nodes a step');
  // TP 3 on 8-GPU nodes: TP is what to change (its own rule says so), no node counts.
  assert.equal(at(scenario({ tp: 3, pp: 4 }), 'plan.dp', 'whole_replicas').hint, undefined);
  assert.equal(at(scenario({ tp: 4, pp: 8, dp: 3 }, { cluster: { node: 'dgx-h100', nodes: 16 } }), 'plan.dp', 'gpus_product').message,
    'TP 4 × PP 8 × CP 1 × DP 3 = 96 GPUs, but the cluster has 128');
  const batch = at(scenario({ tp: 8, pp: 4 }, { cluster: { node: 'dgx-h100', nodes: 12 } }), 'plan.global_batch', 'batch_split');
  assert.equal(batch.message, 'Global batch 512 does not split into micro-batches of 1 over 3 data-parallel replicas (it must be a multiple of 1 × 3 = 3)');
  assert.equal(batch.hint, 'Global batch 510 or 513');
});

test('rules the page does not word keep the engine\'s message, its paths as labels', () => {
  const ds = at(scenario({ framework: 'deepspeed', cuda_graphs: true, global_batch: 64 }, { model: 'llama3-8b', cluster: { node: 'dgx-h100', nodes: 1 } }),
    'plan.cuda_graphs', 'framework_cannot');
  assert.match(ds.message, /^CUDA graphs on: deepspeed cannot do it \(.+\)$/);
  assert.equal(ds.engine.startsWith('plan.cuda_graphs=true: deepspeed cannot do it'), true);
  const groups = { groups: [{ node: 'dgx-h100', nodes: 1 }, { node: 'dgx-h100', nodes: 1 }] };
  assert.equal(at(scenario({ tp: 8, pp: 2, stages: [{ group: 0 }, { group: 0 }] }, { cluster: groups }), 'plan.stages', 'group_gpus').message,
    'The plan uses 16 GPUs of group 0 but it has 8');
  assert.match(at(scenario({ tp: 8, cp: 2 }, { seq_len: 4097 }), 'plan.cp', 'cp_divides_sequence').message,
    /^Sequence length 4097 must be divisible by 2 × CP = 4 \(/);
  // A product's value spaced as the page writes products ("8=16" was left as it came).
  assert.equal(at(scenario({ tp: 1, pp: 2, ep: 8, global_batch: 64 }, { model: 'mixtral-8x7b', cluster: { node: 'dgx-h100', nodes: 1 } }),
    'plan.ep', 'expert_grid').message,
  'Expert TP × EP × PP 1 × 8 × 2 = 16 must divide the 8 GPUs (tp × cp × dp × pp): the expert grid folds onto the same GPUs');
  // The interleaved schedule's groups of PP: the engine's hint, in labels.
  const vpp = at(scenario({ tp: 8, pp: 4, vpp: 2, global_batch: 6 }), 'plan.global_batch', 'interleaved_batches');
  assert.equal(vpp.hint, 'Global batch 8');
  // Not an engine problem (no message): as it is.
  assert.deepEqual(plainProblem({ path: 'plan.tp' }), { path: 'plan.tp' });
});

test('every rule the page words is one the engine gives', () => {
  for (const rule of WORDED_RULES) assert.ok(met.has(rule), `${rule}: met by a real error above`);
});
