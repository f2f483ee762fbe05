// Differential test (issue 13): a few thousand generated scenarios, valid, extreme and hostile,
// through the native CLI (`stepcast estimate --batch --timeline`, one process) and the
// WebAssembly module (estimate(), which always adds the timeline). Every line must be byte for
// byte the same: the same report, or the same error. A 32-bit count in either build (wasm32's
// `long`), or a rule that differs, shows up here as a difference.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { CLI, loadWasm, requireBuilt } from './common.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const COUNT = Number(process.env.STEPCAST_DIFFERENTIAL_COUNT ?? 3000);
const SEED = Number(process.env.STEPCAST_DIFFERENTIAL_SEED ?? 13);

// mulberry32: a small seeded generator, so that a failing case can be generated again.
function generator(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = (list) => list[Math.floor(next() * list.length)];
  const chance = (p) => next() < p;
  return { next, pick, chance };
}

const MODELS = ['llama3-8b', 'llama3-70b', 'gpt3-175b', 'mistral-7b', 'nemotron4-15b'];
const NODES = ['dgx-h100', 'dgx-a100'];
const RECOMPUTE = ['none', 'selective', 'full'];
const PRECISION = ['bf16', 'fp16', 'fp8', 'fp32'];
const FRAMEWORKS = ['megatron-core', 'megatron-lm-2021', 'megatron-deepspeed', 'deepspeed',
  'pytorch-fsdp', 'megatron-fsdp', 'torchtitan'];
const FLAGS = ['sequence_parallel', 'distributed_optimizer', 'flash_attention',
  'overlap_grad_reduce', 'overlap_param_gather', 'tp_comm_overlap', 'overlap_p2p',
  'grad_reduce_in_fp32', 'pp_scatter_gather', 'cuda_graphs'];
// Batches past 2^31 and up to 2^40 (the schema's limit): counts a 32-bit integer cannot hold.
const HUGE = [2 ** 31, 2 ** 32 + 8, 2 ** 36, 2 ** 40, 3 * 2 ** 33];
// Numbers at and past the ends of the ranges of custom hardware.
const EDGES = [1e-308, 1e-6, 1e-3, 0.5, 1, 80, 3000, 1e6, 1048576, 1e308, -1, 0];

function customModel(g) {
  const heads = g.pick([1, 4, 8, 16, 64]);
  return {
    name: g.pick(['custom', 'x\ny', 'K\u00fcche', '\u001b[31mred']),
    layers: g.pick([1, 2, 4, 12, 32, 96, 100000]),
    hidden: heads * g.pick([64, 128, 3]),
    heads,
    ffn_hidden: g.pick([256, 1024, 4096, 28672]),
    vocab: g.pick([1000, 32000, 128256]),
    seq_len: g.pick([128, 2048, 8192, 65536]),
    ffn_type: g.pick(['gelu', 'swiglu', 'relu', 'squared_relu', 'geglu']),
    position: g.pick(['rope', 'learned']),
    tied_embeddings: g.chance(0.5),
  };
}

function customGroup(g) {
  const edge = () => (g.chance(0.3) ? g.pick(EDGES) : null);
  return {
    gpu: {
      name: 'g', arch: g.pick(['hopper', 'ampere', 'unknown']),
      memory_gib: edge() ?? 80, memory_bandwidth_GBps: edge() ?? 3350,
      peak_tflops: { bf16: edge() ?? 989, fp16: 989, fp8: edge() ?? 1979 },
    },
    gpus_per_node: g.pick([1, 4, 8]),
    nodes: g.pick([1, 2, 4]),
    intra_node_link: g.chance(0.5) ? 'nvlink4'
      : { scope: 'intra_node', bandwidth_GBps_per_dir: edge() ?? 450, latency_us: edge() ?? 3 },
    inter_node_link: g.chance(0.5) ? 'ib-ndr'
      : { scope: 'inter_node', bandwidth_GBps_per_dir: edge() ?? 50,
        half_peak_bytes: edge() ?? 1e6 },
  };
}

function plan(g, gpus) {
  const p = {
    tp: g.chance(0.05) ? 3 : g.pick([1, 2, 4, 8, 8]),
    pp: g.pick([1, 1, 2, 4, 8]),
    micro_batch: g.pick([1, 1, 2, 4]),
  };
  if (g.chance(0.2)) p.cp = 2;
  if (p.pp > 1 && g.chance(0.4)) p.vpp = g.chance(0.2) ? 3 : 2;
  if (g.chance(0.05)) p.dp = g.pick([1, 2, 3]);
  // Whole micro-batches per replica (in groups of pp when interleaved), mostly: small counts keep
  // the timeline short (the module always writes it); huge ones pass 2^31 micro-batches.
  const dp = Math.max(1, Math.floor(gpus / (p.tp * p.pp * (p.cp ?? 1))));
  const per_replica = g.chance(0.25) ? g.pick(HUGE) : g.pick([1, 2, 8, 16, 32]) * p.pp;
  p.global_batch = g.chance(0.05) ? g.pick(HUGE) : p.micro_batch * dp * per_replica;
  if (g.chance(0.5)) p.recompute = g.pick(RECOMPUTE);
  if (g.chance(0.3)) p.precision = g.pick(PRECISION);
  if (g.chance(0.3)) p.framework = g.pick(FRAMEWORKS);
  if (g.chance(0.2)) p.zero_stage = g.pick([0, 1, 2, 3]);
  for (const f of FLAGS) if (g.chance(0.05)) p[f] = g.chance(0.5);
  if (p.pp > 1 && g.chance(0.1)) p.first_stage_layers = g.pick([1, 2, 4]);
  if (p.pp > 1 && g.chance(0.1)) p.embedding_in_split = true;
  return p;
}

function heterogeneous(g) {
  const groups = [{ node: 'dgx-h100', nodes: g.pick([1, 2]) }, { node: 'dgx-a100', nodes: 1 }];
  const p = { tp: 8, global_batch: g.chance(0.3) ? g.pick(HUGE) : g.pick([8, 16, 64]) };
  if (g.chance(0.5)) {
    p.replicas = groups.map((grp, i) => ({
      group: i, count: grp.nodes, micro_batches: g.chance(0.7) ? 'auto' : g.pick([1, 2, 4]),
    }));
  } else {
    p.pp = 2;
    if (g.chance(0.4)) p.vpp = 2;
    p.stages = [{ group: 0, layers: g.chance(0.7) ? 'auto' : 16 }, { group: 1, layers: 'auto' }];
    groups[0].nodes = 1;
  }
  return { model: 'llama3-8b', cluster: { groups }, plan: p };
}

function scenario(g) {
  if (g.chance(0.1)) return heterogeneous(g);
  const cluster = g.chance(0.8) ? { node: g.pick(NODES), nodes: g.pick([1, 2, 4, 8, 16, 64]) }
    : customGroup(g);
  const s = {
    model: g.chance(0.8) ? g.pick(MODELS) : customModel(g),
    cluster,
    plan: plan(g, cluster.nodes * (cluster.gpus_per_node ?? 8)),
  };
  if (g.chance(0.15)) s.seq_len = g.pick([1024, 4096, 8192, 6]);
  if (g.chance(0.05)) s.name = 'run \u0007 "one"';
  return s;
}

// Hostile forms: wrong types, unknown keys with control characters, deep nesting, broken text.
function mutate(g, s) {
  const text = JSON.stringify(s);
  switch (Math.floor(g.next() * 8)) {
    case 0: return text.slice(0, Math.floor(g.next() * text.length));
    case 1: s.plan[g.pick(['tp', 'pp', 'global_batch', 'recompute'])] = g.pick(['8', [8], null, true, 1e308, -3, 2.5, { a: 1 }]); break;
    case 2: s.plan[g.pick(['a\nerror: b', '\u001b[2J', 'x\u007fy', 'tp '])] = 1; break;
    case 3: s.plan.tp = JSON.parse('['.repeat(40) + ']'.repeat(40)); break;
    case 4: delete s[g.pick(['model', 'cluster', 'plan'])]; break;
    case 5: s.model = g.pick(['gpt-9', 'llama3-8b\nerror: fake', '', 42]); break;
    case 6: s.plan.pp = g.pick([100000, 5000, 2 ** 20]); break;
    default: return `${text}${g.pick([' x', ',', '}', ' '])}`;
  }
  return JSON.stringify(s);
}

function lines() {
  const g = generator(SEED);
  const out = [];
  while (out.length < COUNT) {
    const s = scenario(g);
    const line = g.chance(0.15) ? mutate(g, s) : JSON.stringify(s);
    if (line.trim() && !line.includes('\n')) out.push(line);
  }
  return out;
}

describe('differential: the native CLI and the WebAssembly module', () => {
  let wasm;
  before(async () => {
    wasm = await loadWasm();
  });

  test(`${COUNT} generated scenarios give byte-identical reports or errors`, (t) => {
    const input = lines();
    const dir = mkdtempSync(join(tmpdir(), 'stepcast-differential-'));
    let native;
    try {
      const file = join(dir, 'scenarios.jsonl');
      writeFileSync(file, `${input.join('\n')}\n`);
      const r = spawnSync(CLI, ['estimate', '--batch', file, '--timeline'],
        { encoding: 'utf8', maxBuffer: 2 ** 31 - 1 });
      if (r.error) throw r.error;
      native = r.stdout.split('\n').slice(0, -1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(native.length, input.length, 'one line out per scenario');
    let reports = 0;
    const codes = new Set();
    const differences = [];
    input.forEach((line, i) => {
      let mine;
      try {
        mine = wasm.estimate(line);
      } catch (e) {
        mine = `the module threw ${e}`;  // an abort: a difference like any other
      }
      if (mine !== native[i] && differences.length < 5)
        differences.push(`line ${i + 1}: ${line.slice(0, 300)}\n  native: ${native[i].slice(0, 300)}\n  wasm:   ${mine.slice(0, 300)}`);
      if (native[i].startsWith('{"error"')) codes.add(JSON.parse(native[i]).error.code);
      else reports += 1;
    });
    t.diagnostic(`${reports} reports, ${input.length - reports} errors (${[...codes].sort().join(', ')})`);
    assert.deepEqual(differences, []);
    // The generator reaches both sides: reports, and errors of every kind it aims at.
    assert.ok(reports > COUNT / 3, `${reports} reports`);
    for (const code of ['parse_error', 'unknown_key', 'type_error', 'out_of_range',
      'unknown_preset', 'invalid_plan', 'budget_exceeded'])
      assert.ok(codes.has(code), `an error ${code} among ${[...codes]}`);
  });
});
