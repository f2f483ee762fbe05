// The WebAssembly module must give exactly the native CLI's answers: the same report (numbers to
// 1e-9 relative: the two builds may round transcendental functions differently), the same error
// messages, the same presets and version.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, test } from 'node:test';

import {
  CLI, cliErrorLine, cliEstimate, cliResolve, cliRun, cliScaling, exampleScenarios, exampleText, jsonDiff, loadWasm,
  requireBuilt,
} from './common.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const base = {
  model: 'llama3-8b',
  cluster: { node: 'dgx-h100', nodes: 2 },
  plan: { tp: 2, pp: 2, micro_batch: 1, global_batch: 64, sequence_parallel: true,
    recompute: 'selective', distributed_optimizer: true, precision: 'bf16' },
};
const variant = (name, patch) => {
  const s = structuredClone(base);
  for (const [k, v] of Object.entries(patch)) {
    if (k === 'plan') Object.assign(s.plan, v);
    else s[k] = v;
  }
  return [name, JSON.stringify(s)];
};
const customGpu = { name: 'a custom accelerator', arch: 'hopper', memory_gib: 96,
  memory_bandwidth_GBps: 4000, peak_tflops: { bf16: 800, fp16: 800, fp8: 1600 } };
const customIntra = { name: 'custom fabric', scope: 'intra_node', bandwidth_GBps_per_dir: 300,
  busbw_GBps: 240, half_peak_bytes: 8e6, latency_us: 8 };
const customInter = { name: 'custom NIC', scope: 'inter_node', bandwidth_GBps_per_dir: 50,
  busbw_GBps: 45, half_peak_bytes: 2e7, latency_us: 20 };

const AH = { groups: [{ node: 'dgx-a100', nodes: 1 }, { node: 'dgx-h100', nodes: 1 }], inter_group_link: 'roce-100g' };

// Scenarios beyond the shipped examples, chosen to reach every branch of the report.
const variants = [
  variant('derived dp', {}),
  variant('explicit dp, seq_len override', { plan: { dp: 4 }, seq_len: 4096 }),
  variant('fp32, no recompute', { plan: { precision: 'fp32', recompute: 'none' } }),
  variant('fp16, full recompute', { plan: { precision: 'fp16', recompute: 'full' } }),
  variant('fp8 with TP overlap', { plan: { precision: 'fp8', tp_comm_overlap: true } }),
  variant('ZeRO-2', { plan: { zero_stage: 2 } }),
  variant('ZeRO-3', { plan: { zero_stage: 3 } }),
  variant('no overlaps', { plan: { overlap_grad_reduce: false, overlap_param_gather: false,
    overlap_p2p: false, grad_reduce_in_fp32: false } }),
  variant('context parallel', { plan: { cp: 2, pp: 1 } }),
  variant('interleaved, vpp 4', { plan: { pp: 4, tp: 4, vpp: 4 }, cluster: { node: 'dgx-h100', nodes: 4 } }),
  variant('micro-batch 4', { plan: { micro_batch: 4, global_batch: 256 } }),
  variant('TP across nodes', { model: 'gpt3-6.7b', plan: { tp: 16, pp: 1, sequence_parallel: true } }),
  variant('few micro-batches', { plan: { pp: 8, tp: 2, global_batch: 4 }, cluster: { node: 'dgx-h100', nodes: 2 } }),
  variant('unfused attention on V100', { model: 'gpt3-1.3b', cluster: { node: 'dgx-1-v100', nodes: 1 },
    plan: { tp: 1, pp: 1, precision: 'fp16', flash_attention: false, global_batch: 32 } }),
  variant('MI300X', { model: 'llama2-70b', cluster: { node: 'mi300x-x8', nodes: 4 },
    plan: { tp: 8, pp: 2, global_batch: 128 } }),
  variant('Gaudi 3', { cluster: { node: 'hls-gaudi3', nodes: 2 } }),
  variant('GB200 NVL72', { model: 'llama3-70b', cluster: { node: 'gb200-nvl72', nodes: 1 },
    plan: { tp: 8, pp: 1, global_batch: 72 } }),
  variant('custom GPU and links', { cluster: { gpu: customGpu, gpus_per_node: 4, nodes: 4,
    intra_node_link: customIntra, inter_node_link: customInter, nics_per_node: 4 } }),
  variant('cluster groups form', { cluster: { groups: [{ node: 'dgx-h100', nodes: 2 }] } }),
  variant('tied embeddings, learned positions', { model: 'gpt3-13b', plan: { tp: 4, pp: 2, global_batch: 32 } }),
  // Heterogeneous clusters: stages across groups, uneven stages, replica sets, explicit groups.
  variant('groups: the pipeline across A100 and H100', { cluster: AH, plan: { tp: 8, pp: 2,
    stages: [{ group: 0, layers: 'auto' }, { group: 1, layers: 'auto' }] } }),
  variant('groups: uneven stages on one group', { plan: { stages: [{ group: 0, layers: 12 }, { group: 0, layers: 20 }] } }),
  variant('groups: replica sets with counts', { cluster: { groups: [{ node: 'dgx-a100', nodes: 2 }, { node: 'dgx-h100', nodes: 1 }] },
    plan: { tp: 4, pp: 2, replicas: [{ group: 0, count: 2 }, { group: 1, count: 1, micro_batches: 'auto' }] } }),
  variant('groups: fixed micro-batches per replica', { cluster: AH, plan: { tp: 4, pp: 2,
    replicas: [{ group: 0, micro_batches: 24 }, { group: 1, micro_batches: 40 }] } }),
  variant('groups: an explicit group and a custom link between', { cluster: { groups: [{ gpu: customGpu,
    gpus_per_node: 4, nodes: 2, intra_node_link: customIntra, inter_node_link: customInter }, { node: 'dgx-h100', nodes: 1 }],
  inter_group_link: customInter }, plan: { tp: 4, pp: 2, stages: [{ group: 0, layers: 'auto' }, { group: 1, layers: 'auto' }] } }),
  variant('big pipeline (timeline truncated)', { model: 'gpt3-175b', cluster: { node: 'dgx-a100', nodes: 64 },
    plan: { tp: 8, pp: 16, vpp: 3, global_batch: 8192 } }),
];

let wasm;
before(async () => { wasm = await loadWasm(); });

function compareReports(text) {
  const cli = cliEstimate(text);
  assert.equal(cli.status, 0, `the CLI failed: ${cli.stderr}`);
  const out = wasm.estimate(text);
  const report = JSON.parse(out);
  assert.equal(report.error, undefined, `the module failed: ${out}`);
  // `stepcast estimate` says what makes an out-of-memory plan fit (fit_fixes); the engine module
  // never asks for it (EstimateOptions::fit_fixes, a pointer it does not link: the first visit's
  // budget), the tools module's fitFixes() does, and the page shows them as buttons.
  const diff = jsonDiff(cli.report, report).filter((d) => d !== '$.fit_fixes: missing');
  assert.deepEqual(diff, [], `the module's report differs from the CLI's:\n${diff.join('\n')}`);
  if (!cli.report.fits) {
    const fixes = JSON.parse(wasm.fitFixes(text));
    assert.equal(fixes.fits, false);
    const fixDiff = jsonDiff(cli.report.fit_fixes ?? [], fixes.fit_fixes);
    assert.deepEqual(fixDiff, [], `fitFixes differs from the CLI's fit_fixes:\n${fixDiff.join('\n')}`);
  }
  return report;
}

test('fitFixes: the changes that make Llama 3 8B fit on one DGX H100 at 2 x 8,192 tokens a micro-batch, as `stepcast estimate` lists them', () => {
  const text = JSON.stringify({ model: 'llama3-8b', cluster: { node: 'dgx-h100', nodes: 1 }, seq_len: 8192,
    plan: { tp: 1, pp: 1, micro_batch: 2, global_batch: 64 } });
  const cli = cliEstimate(text, { timeline: false });
  assert.equal(cli.status, 0, cli.stderr);
  assert.equal(cli.report.fits, false);
  assert.ok(cli.report.fit_fixes.length > 0, 'some change makes it fit');
  compareReports(text);
  // A plan that fits has none.
  assert.deepEqual(JSON.parse(wasm.fitFixes(exampleText('llama3-70b'))), { fits: true, fit_fixes: [] });
  assert.equal(JSON.parse(wasm.fitFixes('{"model": 3}')).error.code !== undefined, true);
});

describe('reports: WebAssembly equals the native CLI', () => {
  for (const [file, text] of exampleScenarios()) {
    test(`example ${file}`, () => {
      const r = compareReports(text);
      assert.ok(r.iteration_time_s > 0);
      assert.ok(Array.isArray(r.stages) && r.stages.length > 0);
    });
  }
  for (const [name, text] of variants) test(`variant: ${name}`, () => { compareReports(text); });

  test('the OOM example reports that it does not fit', () => {
    const oom = exampleScenarios().find(([f]) => f.includes('oom'));
    assert.ok(oom, 'an example scenario named *oom* exists');
    const r = JSON.parse(wasm.estimate(oom[1]));
    assert.equal(r.fits, false);
    assert.ok(r.stages.some((s) => !s.fits));
  });

  test('the same input twice gives the same text, also after an error', () => {
    const text = variants[0][1];
    const first = wasm.estimate(text);
    wasm.estimate('{not json');
    assert.equal(wasm.estimate(text), first);
  });
});

// The `report` option: {"report": "summary"} is `stepcast estimate --report summary` (each stage
// without its census operations), {"report": "full"} the report with no options.
describe('the report option: WebAssembly equals the CLI\'s --report', () => {
  const interleaved = variants.find(([name]) => name.startsWith('interleaved'))[1];
  test('summary: the CLI\'s summary, the full report less stages[].communication', () => {
    const cli = spawnSync(CLI, ['estimate', '-', '--timeline', '--report', 'summary'],
      { input: interleaved, encoding: 'utf8', maxBuffer: 1 << 30 });
    assert.equal(cli.status, 0, cli.stderr);
    const summary = JSON.parse(wasm.estimate(interleaved, '{"report": "summary"}'));
    assert.deepEqual(jsonDiff(JSON.parse(cli.stdout), summary), []);
    const full = JSON.parse(wasm.estimate(interleaved));
    for (const st of full.stages) {
      assert.ok(st.communication.length > 0);
      delete st.communication;
    }
    assert.deepEqual(summary, full);
  });
  test('full is the report without options; columns take the option too', () => {
    assert.equal(wasm.estimate(interleaved, '{"report": "full"}'), wasm.estimate(interleaved));
    const columns = wasm.estimateColumns(interleaved, '{"report": "summary"}');
    assert.equal(JSON.parse(columns.json).stages[0].communication, undefined);
  });
  test('timeline false: the CLI without --timeline, a summary a sweep can afford', () => {
    const cli = spawnSync(CLI, ['estimate', '-', '--report', 'summary'],
      { input: interleaved, encoding: 'utf8', maxBuffer: 1 << 30 });
    assert.equal(cli.status, 0, cli.stderr);
    const options = '{"report": "summary", "timeline": false}';
    const lean = JSON.parse(wasm.estimate(interleaved, options));
    assert.deepEqual(jsonDiff(JSON.parse(cli.stdout), lean), []);
    assert.deepEqual(lean.timeline.events, []);
    assert.ok(JSON.parse(wasm.estimate(interleaved, '{"report": "summary"}')).timeline.events.length > 0);
    assert.equal(wasm.estimateColumns(interleaved, options).events.length, 0);
    const bad = JSON.parse(wasm.estimate(interleaved, '{"timeline": "no"}'));
    assert.deepEqual(bad.error, { code: 'type_error', path: 'timeline',
      message: 'timeline must be true or false' });
  });
  test('an unknown report kind is an error naming the option', () => {
    for (const options of ['{"report": "short"}', '{"report": 1}']) {
      const out = JSON.parse(wasm.estimate(interleaved, options));
      assert.deepEqual(out.error, { code: 'out_of_range', path: 'report',
        message: 'report must be full or summary' });
    }
    assert.equal(JSON.parse(wasm.estimate(interleaved, '{not json')).error.code, 'parse_error');
  });
});

// Bad input: the CLI exits 2 with `error: <message>` (and ` (try: <hint>)`); the module returns
// {"error": {...}} with the same message (and hint) and the path the page uses to put the message next to its control.
const plan = (p) => JSON.stringify({ ...base, plan: { ...base.plan, ...p } });
const errors = [
  ['not JSON', '{"model": ', 'parse_error', ''],
  ['not an object', '[1, 2]', 'type_error', ''],
  ['unknown top-level key', JSON.stringify({ ...base, modle: 'x' }), 'unknown_key', 'modle'],
  ['missing model', JSON.stringify({ cluster: base.cluster, plan: base.plan }), 'missing_key', 'model'],
  ['unknown model preset', JSON.stringify({ ...base, model: 'llama9-1t' }), 'unknown_preset', 'model'],
  ['unknown node preset', JSON.stringify({ ...base, cluster: { node: 'dgx-z', nodes: 1 } }), 'unknown_preset', 'cluster.node'],
  ['node count 0', JSON.stringify({ ...base, cluster: { node: 'dgx-h100', nodes: 0 } }), 'out_of_range', 'cluster.nodes'],
  ['tp not an integer', plan({ tp: 'eight' }), 'type_error', 'plan.tp'],
  ['tp 0', plan({ tp: 0 }), 'out_of_range', 'plan.tp'],
  ['tp does not divide kv_heads', plan({ tp: 16, pp: 1 }), 'invalid_plan', 'plan.tp'],
  ['tp does not divide heads', JSON.stringify({ ...base, cluster: { gpu: 'h100-sxm5-80gb', gpus_per_node: 3,
    nodes: 1, intra_node_link: 'nvlink4', inter_node_link: 'ib-ndr' }, plan: { ...base.plan, tp: 3, pp: 1 } }),
    'invalid_plan', 'plan.tp'],
  ['derived dp leaves GPUs over', plan({ tp: 3, pp: 1 }), 'invalid_plan', 'plan.tp'],
  ['tp*pp*dp is not the GPU count', plan({ dp: 3 }), 'invalid_plan', 'plan.dp'],
  ['vpp without pp', plan({ pp: 1, vpp: 2 }), 'invalid_plan', 'plan.vpp'],
  ['layers not divisible by pp', JSON.stringify({ ...base, cluster: { node: 'dgx-h100', nodes: 3 },
    plan: { ...base.plan, tp: 8, pp: 3 } }), 'invalid_plan', 'plan.pp'],
  ['layers not divisible by pp*vpp', plan({ pp: 2, vpp: 3 }), 'invalid_plan', 'plan.vpp'],
  ['global batch not divisible', plan({ global_batch: 63 }), 'invalid_plan', 'plan.global_batch'],
  ['fp8 on A100', JSON.stringify({ ...base, cluster: { node: 'dgx-a100', nodes: 2 },
    plan: { ...base.plan, precision: 'fp8' } }), 'invalid_plan', 'plan.precision'],
  ['unknown recompute', plan({ recompute: 'some' }), 'out_of_range', 'plan.recompute'],
  ['unknown plan key', plan({ tensor_parallel: 8 }), 'unknown_key', 'plan.tensor_parallel'],
  ['missing global batch', JSON.stringify({ ...base, plan: { tp: 2 } }), 'missing_key', 'plan.global_batch'],
  ['boolean as string', plan({ sequence_parallel: 'yes' }), 'type_error', 'plan.sequence_parallel'],
  ['cp does not divide the sequence', JSON.stringify({ ...base, seq_len: 1001, plan: { ...base.plan, cp: 2 } }),
    'invalid_plan', 'plan.cp'],
  ['custom model: hidden not divisible by heads', JSON.stringify({ ...base, model: { layers: 4,
    hidden: 1000, heads: 3, ffn_hidden: 4000, vocab: 1000, seq_len: 128, ffn_type: 'gelu',
    position: 'rope', tied_embeddings: false } }), 'invalid_model', 'model.hidden'],
  ['custom cluster: NIC as the intra-node link', JSON.stringify({ ...base, cluster: { gpu: 'h100-sxm5-80gb',
    gpus_per_node: 8, nodes: 2, intra_node_link: 'ib-ndr', inter_node_link: 'ib-ndr' } }),
    'invalid_cluster', 'cluster.intra_node_link'],
  ['a stage on a group that does not exist', JSON.stringify({ ...base, cluster: AH, plan: { ...base.plan, tp: 8,
    stages: [{ group: 0, layers: 'auto' }, { group: 2, layers: 'auto' }] } }), 'invalid_plan', 'plan.stages[1].group'],
  ['two groups whose stages straddle them', JSON.stringify({ ...base, cluster: { groups: [AH.groups[0],
    { node: 'dgx-h100', nodes: 2 }] }, plan: { ...base.plan, tp: 4, pp: 2, global_batch: 60 } }),
    'invalid_plan', 'plan.stages'],
  ['both stages on one group', JSON.stringify({ ...base, cluster: AH, plan: { ...base.plan, tp: 8,
    stages: [{ group: 0, layers: 'auto' }, { group: 0, layers: 'auto' }] } }), 'invalid_plan', 'plan.stages'],
  ['a stage of 0 layers', plan({ stages: [{ group: 0, layers: 0 }, { group: 0, layers: 'auto' }] }),
    'out_of_range', 'plan.stages[0].layers'],
  ['replica micro-batches that do not add up', JSON.stringify({ ...base, cluster: AH, plan: { ...base.plan, tp: 4,
    replicas: [{ group: 0, micro_batches: 10 }, { group: 1, micro_batches: 10 }] } }), 'invalid_plan', 'plan.replicas'],
  ['a group of 0 nodes', JSON.stringify({ ...base, cluster: { groups: [{ node: 'dgx-a100', nodes: 0 }, AH.groups[1]] } }),
    'out_of_range', 'cluster.groups[0].nodes'],
  ['an unknown node preset in a group', JSON.stringify({ ...base, cluster: { groups: [AH.groups[0], { node: 'dgx-z', nodes: 1 }] } }),
    'unknown_preset', 'cluster.groups[1].node'],
  ['custom GPU without peaks', JSON.stringify({ ...base, cluster: { gpu: { memory_gib: 80,
    memory_bandwidth_GBps: 3000 }, gpus_per_node: 8, nodes: 2, intra_node_link: 'nvlink4',
    inter_node_link: 'ib-ndr' } }), 'missing_key', 'cluster.gpu.peak_tflops'],
];

describe('errors: WebAssembly gives the CLI\'s message', () => {
  for (const [name, text, code, path] of errors) {
    test(name, () => {
      const cli = cliEstimate(text);
      assert.equal(cli.status, 2, `the CLI should reject this input (stdout had a report: ${cli.status === 0})`);
      assert.match(cli.stderr, /^error: .+\n$/, 'one line on stderr');
      const out = JSON.parse(wasm.estimate(text));
      assert.ok(out.error, `the module should return an error, got: ${JSON.stringify(out).slice(0, 200)}`);
      // (The CLI says the rule's hint on the same line, where there is one.)
      assert.equal(cliErrorLine(out.error), cli.stderr.slice(0, -1));
      assert.equal(out.error.code, code);
      assert.equal(out.error.path, path);
      // The whole error, its rule id and values included, is `stepcast resolve`'s first problem
      // (text that is not JSON: resolve has no document to answer in JSON, only the line above).
      const first = cliResolve(text).problems[0];
      if (code !== 'parse_error') assert.deepEqual(out.error, first);
    });
  }
});

describe('the schema and the scaling sweep: the CLI\'s', () => {
  test('schema() is `stepcast schema --format json`, the search\'s space included', () => {
    const cli = cliRun(['schema', '--format', 'json']);
    assert.equal(cli.status, 0, cli.stderr);
    const schema = JSON.parse(wasm.schema());
    assert.deepEqual(schema, JSON.parse(cli.stdout));
    assert.match(schema.search.doc, /^The engine estimates the Megatron-LM plans/);
    assert.ok(schema.search.varies['plan.tp'] && schema.search.keeps.includes('plan.global_batch'));
  });

  for (const part of ['llama3-70b_dgx-h100x8', 'qwen3-30b-a3b', 'a100-and-h100_stages']) {
    test(`scaling() of ${part} is \`stepcast scaling --format json\``, () => {
      const text = exampleText(part);
      const out = JSON.parse(wasm.scaling(text));
      const cli = cliScaling(text);
      if (out.error) {
        assert.equal(cli.status, 2);
        assert.equal(cliErrorLine(out.error), cli.stderr.slice(0, -1));
        return;
      }
      assert.equal(cli.status, 0, cli.stderr);
      assert.deepEqual(jsonDiff(cli.result, out), []);
    });
  }
});

describe('presets and version', () => {
  // Less each preset's `notes` (the reasoning behind its numbers, ~9 KB of the first visit) and
  // each GPU, link, node and model preset's `source` (where its numbers come from; the page shows
  // neither, the presets/ files and `stepcast presets` both), and of a model's recipe what only
  // the native test reads (its cluster, measured time, source and workload): the WebAssembly
  // build embeds the presets without them (engine/embed_presets.cmake). The training software's
  // flags keep their sources (the page shows them beside each flag); its execution settings'
  // sources are emptied (the engine reads their values, the page shows neither).
  test('presets() is `stepcast presets --format json` less the presets\' notes and sources', () => {
    const cli = cliRun(['presets', '--format', 'json']);
    assert.equal(cli.status, 0, cli.stderr);
    const presets = JSON.parse(wasm.presets());
    const expected = JSON.parse(cli.stdout);
    let notes = 0, sources = 0;
    for (const kind of ['gpus', 'links', 'nodes', 'models'])
      for (const item of expected[kind]) if ('notes' in item) { delete item.notes; ++notes; }
    for (const kind of ['gpus', 'links', 'nodes', 'models'])
      for (const item of expected[kind]) if ('source' in item) { delete item.source; ++sources; }
    let settings = 0;
    for (const f of expected.frameworks)
      for (const e of Object.values(f.execution)) if (e.source) { e.source = ''; ++settings; }
    let recipes = 0;
    for (const { recipe } of expected.models) {
      if (!recipe) continue;
      ++recipes;
      for (const k of ['cluster', 'measured_iter_time_s', 'source']) delete recipe[k];
      for (const k of ['global_batch', 'micro_batch', 'precision', 'cuda_graphs']) delete recipe.plan[k];
    }
    assert.ok(notes > 50, 'the native presets carry notes');
    assert.ok(sources > 50, 'and sources');
    assert.ok(recipes >= 4, 'and MoE models their recipes');
    assert.ok(settings > 20, 'and the training software its execution settings\' sources');
    assert.ok(presets.frameworks.every((f) => f.plan.sequence_parallel.source), 'the training software keeps its sources');
    assert.deepEqual(jsonDiff(expected, presets), []);
    for (const kind of ['gpus', 'links', 'nodes', 'models']) {
      assert.ok(presets[kind].length > 0, `${kind} listed`);
      for (const item of presets[kind]) assert.match(item.id, /^[a-z0-9.-]+$/);
    }
  });

  test('version() is `stepcast version`', () => {
    const cli = cliRun(['version']);
    assert.equal(cli.stdout.trim(), `stepcast ${wasm.version()}`);
  });
});

// The page calls estimateColumns (the timeline as a typed array): rebuilt, it must be estimate()'s
// report, hence the CLI's.
describe('estimateColumns: the page\'s fast path gives estimate()\'s report', () => {
  const rebuild = (out) => {
    const report = JSON.parse(out.json);
    if (report.error) return report;
    const ev = out.events;
    assert.ok(ev instanceof Float64Array && ev.length % 6 === 0);
    assert.deepEqual(report.timeline.events, []);
    // placement (modules with heterogeneous clusters): 2 numbers per event, replica and group.
    const place = out.placement;
    if (place) assert.ok(place instanceof Float64Array && place.length === (ev.length / 6) * 2);
    for (let j = 0, i = 0; j < ev.length; j += 6, i += 2) {
      const e = { kind: out.kinds[ev[j + 1]], stage: ev[j], chunk: ev[j + 3],
        micro_batch: ev[j + 2], start_s: ev[j + 4], end_s: ev[j + 5] };
      if (place) Object.assign(e, { replica: place[i], group: place[i + 1] });
      report.timeline.events.push(e);
    }
    return report;
  };
  const cases = [...exampleScenarios(), ...variants, ...errors.map(([n, t]) => [n, t])];
  test(`${cases.length} scenarios and errors`, () => {
    assert.equal(typeof wasm.estimateColumns, 'function');
    for (const [name, text] of cases) {
      const expected = JSON.parse(wasm.estimate(text));
      const diff = jsonDiff(expected, rebuild(wasm.estimateColumns(text)), { rel: 0, abs: 0 });
      assert.deepEqual(diff, [], `${name}:\n${diff.join('\n')}`);
    }
  });
});
