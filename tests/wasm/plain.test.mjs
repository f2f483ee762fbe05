// The page's wording of the engine's problems (web/src/ui/plain.js), with the engine's own schema:
// each rule a first-time user meets, said with the controls' labels and the numbers (issue "the
// page, round 2", item 5). The browser suites check the same text lands at the right control.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { nodesThatFit, plainProblem } from '../../web/src/ui/plain.js';
import { setSchema } from '../../web/src/scenario/schema.js';
import { CLI, cliRun, requireBuilt } from './common.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');
const schema = cliRun(['schema', '--format', 'json']);
assert.equal(schema.status, 0, schema.stderr);
setSchema(JSON.parse(schema.stdout));

const say = (message, hint, options) => plainProblem({ path: 'x', message, hint }, options);

test('divisibility rules name the control, its value and what it divides', () => {
  assert.equal(say('plan.tp=3 must divide model.heads=64').message, 'TP 3 does not divide the 64 attention heads');
  assert.equal(say('plan.tp=3 must divide model.ffn_hidden=28672').message, 'TP 3 does not divide the FFN size 28,672');
  assert.equal(say('plan.ep=3 must divide model.moe.experts=128 (each rank holds whole experts)').message,
    'EP 3 does not divide the 128 experts (each rank holds whole experts)');
  assert.equal(say('model.hidden=8192 must be divisible by model.heads=50 (or give model.head_dim)').message,
    'Heads 50 does not divide the hidden size 8,192 (or give Head size)');
  assert.equal(say('plan.global_batch=500 must be divisible by plan.micro_batch=3').message,
    'Micro-batch 3 does not divide the global batch 500');
  assert.equal(say('model.layers=80 must be divisible by plan.pp*plan.vpp=3*1=3').message,
    'PP 3 does not divide the 80 layers into equal stages');
  assert.equal(say('model.layers=80 must be divisible by plan.pp*plan.vpp=3*2=6').message,
    'PP 3 × VPP 2 = 6 model chunks do not divide the 80 layers evenly');
  assert.equal(say('plan.global_batch=512 must be divisible by plan.micro_batch*plan.dp=1*3=3').message,
    'Global batch 512 does not split into micro-batches of 1 over 3 data-parallel replicas (it must be a multiple of 1 × 3 = 3)');
});

test('GPU counts: the whole-replica rule, with node counts that work when TP fits the nodes', () => {
  const split = "the cluster's 56 GPUs are not divisible by tp*pp*cp=8*4*1=32";
  assert.deepEqual(say(split, '', { gpusPerNode: 8 }), {
    path: 'x', engine: split, hint: '4 or 8 nodes, or a TP × PP that divides 56 GPUs',
    message: "The cluster's 56 GPUs do not split into whole model replicas of TP 8 × PP 4 = 32 GPUs",
  });
  // TP 3 on 8-GPU nodes: TP is what to change (its own rule says so), no node counts.
  assert.equal(say("the cluster's 64 GPUs are not divisible by tp*pp*cp=3*4*1=12", '', { gpusPerNode: 8 }).hint, '');
  assert.equal(say('plan: tp*pp*cp*dp=4*8*1*3=96 must equal the cluster\'s GPU count 128').message,
    'TP 4 × PP 8 × CP 1 × DP 3 = 96 GPUs, but the cluster has 128');
  // Replicas of 12 GPUs on 8-GPU nodes: 3 nodes hold 2 of them.
  assert.deepEqual(nodesThatFit(7, 8, 12), [6, 9]);
  assert.deepEqual(nodesThatFit(2, 8, 32), [4]);
});

test('hints, switches, groups and the fallback: labels instead of JSON paths', () => {
  assert.equal(say('plan.tp=3 must divide model.heads=64', 'tp 1, 2, 4 or 8 divides the model').hint, 'TP 1, 2, 4 or 8');
  assert.equal(say('x', 'pp·vpp 1, 2, 4, 5 or 8 divides 80 layers').hint, 'PP × VPP 1, 2, 4, 5 or 8');
  // Alternatives, each in the page's words (DeepSeek-V3's 61 layers on 8 stages).
  assert.equal(say('plan.global_batch=1002 must be divisible by plan.micro_batch*plan.dp=2*2=4', 'plan.global_batch=1000 or 1004').hint,
    'Global batch 1000 or 1004');
  assert.equal(say('x', 'pp·vpp 1 or 61 divides 61 layers; plan.first_stage_layers=6 and plan.last_stage_layers=7 (8 on each other stage)').hint,
    'PP × VPP 1 or 61; Layers on the first stage 6 and Layers on the last stage 7 (8 on each other stage)');
  assert.equal(say('x', 'pp·vpp 1, 2, 3 or 6 divides 126 layers; count the embedding and the loss as layers (plan.embedding_in_split, plan.loss_in_split)').hint,
    'PP × VPP 1, 2, 3 or 6; count the embedding and the loss as layers (Embedding counts as a layer, Loss counts as a layer)');
  assert.equal(say('plan.cuda_graphs=true: deepspeed cannot do it (eager)').message, 'CUDA graphs on: deepspeed cannot do it (eager)');
  assert.equal(say('the plan uses 16 GPUs of cluster.groups[0] but it has 8').message, 'The plan uses 16 GPUs of group 0 but it has 8');
  assert.equal(say('cluster.groups[1].nodes=0 is below 1').message, 'Nodes 0 (group 1) is below 1');
  assert.equal(say('seq_len=4097 must be divisible by 2*plan.cp=4').message, 'Sequence length 4097 must be divisible by 2 × CP = 4');
  // Not an engine problem (no message): as it is.
  assert.deepEqual(plainProblem({ path: 'plan.tp' }), { path: 'plan.tp' });
});
