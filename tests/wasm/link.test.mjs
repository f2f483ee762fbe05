// Scenario links: the page (through the WebAssembly module: toLink / fromLink) and the CLI
// (`stepcast link`, `stepcast estimate --link`) share one codec, so they must write the same link
// for the same scenario, read every link to the same plan, and refuse a bad link with the same
// message. Old links (tests/browser/fixtures/links-v*.txt) keep opening.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import {
  CLI, cliEstimate, cliEstimateLink, cliLink, exampleScenarios, jsonDiff, linkFixtures, loadWasm, requireBuilt,
} from './common.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const BASE = 'http://localhost:8080/';
let wasm;
before(async () => { wasm = await loadWasm(); });

const toLink = (scenario, page = {}, base = BASE) =>
  JSON.parse(wasm.toLink(JSON.stringify({ scenario, page }), base));
const fromLink = (url) => JSON.parse(wasm.fromLink(url));

const customGpu = { name: 'a custom accelerator', arch: 'hopper', memory_gib: 96,
  memory_bandwidth_GBps: 4000, peak_tflops: { bf16: 800, fp16: 800, fp8: 1600 } };
const extra = [
  ['custom GPU inline', { model: 'llama3-8b', cluster: { gpu: customGpu, gpus_per_node: 4, nodes: 2,
    intra_node_link: 'nvlink4', inter_node_link: 'ib-ndr', nics_per_node: 4 },
  plan: { tp: 2, pp: 2, global_batch: 64, recompute: 'full', precision: 'fp16', overlap_p2p: false } }],
  ['groups with an explicit group and an inline link between', { model: 'llama3-8b', cluster: { groups: [
    { gpu: customGpu, gpus_per_node: 4, nodes: 2, intra_node_link: 'nvlink4', inter_node_link: 'ib-ndr' },
    { node: 'dgx-h100', nodes: 1 }], inter_group_link: { name: 'a slow link', scope: 'inter_node',
    bandwidth_GBps_per_dir: 5, busbw_GBps: 4, half_peak_bytes: 1e6, latency_us: 30 } },
  plan: { tp: 4, pp: 2, global_batch: 64, stages: [{ group: 0, layers: 14 }, { group: 1, layers: 'auto' }] } }],
  ['replica sets, fixed and auto micro-batches', { model: 'llama3-8b', cluster: { groups: [{ node: 'dgx-a100', nodes: 2 },
    { node: 'hgx-h200', nodes: 1 }], inter_group_link: 'ib-ndr' },
  plan: { tp: 8, global_batch: 96, replicas: [{ group: 0, count: 2, micro_batches: 24 }, { group: 1, micro_batches: 'auto' }] } }],
  ['text that needs escaping', { name: 'a & b = <c> #d %e "f" ü', model: 'llama3-8b',
    cluster: { node: 'dgx-h100', nodes: 1 }, plan: { tp: 8, global_batch: 16 } }],
];
const cases = [...exampleScenarios().map(([f, text]) => [f, JSON.parse(text)]), ...extra];

describe('links: the module and the CLI share one codec', () => {
  for (const [name, scenario] of cases) {
    test(`${name}: the same link, read back to the same plan`, () => {
      const cli = cliLink(JSON.stringify(scenario), { base: BASE });
      assert.equal(cli.status, 0, cli.stderr);
      const mine = toLink(scenario);
      assert.equal(mine.error, undefined, JSON.stringify(mine.error));
      assert.equal(mine.link, cli.link, 'the module and `stepcast link` write the same link');
      assert.ok(mine.link.startsWith(`${BASE}#v=3&`) && mine.link.endsWith('&end'), 'written in format 3, with its end marker');

      const back = fromLink(mine.link);
      assert.equal(back.error, undefined, JSON.stringify(back.error));
      const direct = cliEstimate(JSON.stringify(scenario));
      const viaLink = cliEstimateLink(mine.link, { timeline: true });
      assert.equal(viaLink.status, 0, viaLink.stderr);
      assert.deepEqual(jsonDiff(direct.report, viaLink.report), [], '`estimate --link` gives the scenario\'s report');
      const viaModule = JSON.parse(wasm.estimate(JSON.stringify(back.scenario)));
      // (the CLI says what makes an out-of-memory plan fit, fit_fixes; the module never asks:
      // cli-parity.test.mjs)
      assert.deepEqual(jsonDiff(direct.report, viaModule).filter((d) => d !== '$.fit_fixes: missing'), [],
        'the module reads the link to the same plan');
    });
  }

  test('tokens and price ride along', () => {
    const scenario = cases[0][1];
    const cli = cliLink(JSON.stringify(scenario), { base: BASE, tokens: 2e12, price: 2.5 });
    assert.equal(cli.status, 0, cli.stderr);
    const mine = fromLink(cli.link);
    assert.equal(mine.page.tokens, 2e12);
    assert.equal(mine.page.price_per_gpu_hour, 2.5);
    const own = fromLink(toLink(scenario, { tokens: 2e12, price_per_gpu_hour: 2.5 }).link);
    assert.deepEqual(jsonDiff(own, mine), []);
  });
});

// What a format 0 or 1 link meant by a plan flag it leaves out: the engine's fixed defaults from
// before training-software profiles. Format 2 leaves them to plan.framework; old links open with
// these filled in, so that they estimate what they did. (overlap_param_gather, on then, is left
// to megatron-core's profile: on wherever there is a gather to overlap.)
const OLD_DEFAULTS = {
  sequence_parallel: false, distributed_optimizer: false, zero_stage: 0, flash_attention: true, overlap_grad_reduce: true,
  tp_comm_overlap: false, overlap_p2p: true, grad_reduce_in_fp32: true,
  pp_scatter_gather: false, fp8_param_gather: false, cuda_graphs: false,
  hidden_dropout: 0.1, // (Megatron's default: the engine of those formats counted dropout masks)
};
// zero_stage and distributed_optimizer: the engine of those formats ran the larger sharding of the
// two; a link opens with both set to it (today's reader refuses the two stated apart).
const withOldDefaults = (scenario) => {
  const plan = { ...OLD_DEFAULTS, ...scenario.plan };
  plan.zero_stage = Math.max(plan.zero_stage, plan.distributed_optimizer ? 1 : 0);
  plan.distributed_optimizer = plan.zero_stage >= 1;
  return { ...scenario, plan };
};

describe('old links keep opening', () => {
  test('format 0 (percent-encoded scenario JSON), with the old defaults', () => {
    const links = linkFixtures('links-v0.txt');
    assert.ok(links.length >= 2);
    for (const link of links) {
      const expected = withOldDefaults(JSON.parse(decodeURIComponent(link.slice(1))));
      const r = fromLink(link);
      // The plan flags a format 0 link leaves out open as the fixed defaults of its day.
      const diff = jsonDiff(expected, r.scenario).filter((d) => !/^\$\.plan\.\w+: unexpected$/.test(d));
      assert.deepEqual(diff, [], link.slice(0, 80));
      const cli = cliEstimateLink(BASE + link, { timeline: true });
      assert.equal(cli.status, 0, cli.stderr);
      assert.deepEqual(jsonDiff(cliEstimate(JSON.stringify(r.scenario)).report, cli.report), []);
    }
  });

  test('format 1, as first written, with the old defaults', () => {
    const links = linkFixtures('links-v1.txt');
    assert.ok(links.length >= 2);
    for (const link of links) {
      const r = fromLink(link);
      assert.equal(r.error, undefined, `${link.slice(0, 80)}: ${JSON.stringify(r.error)}`);
      // The same keys read as format 2, plus the old defaults of the flags the link leaves out.
      const asNew = fromLink(link.replace(/^#v=1&/, '#v=2&'));
      assert.deepEqual(jsonDiff(withOldDefaults(asNew.scenario), r.scenario), [], 'every flag it leaves out at its old default');
      const cli = cliEstimateLink(BASE + link, { timeline: true });
      assert.equal(cli.status, 0, cli.stderr);
      assert.deepEqual(jsonDiff(cli.report, JSON.parse(wasm.estimate(JSON.stringify(r.scenario)))), []);
    }
  });
});

const bad = [
  ['not key=value', '#garbage', /not key=value/],
  ['a value of the wrong type', '#v=2&model=llama3-8b&tp=abc', /tp=abc is not a valid value/],
  ['an unknown key', '#v=2&model=llama3-8b&tensor=8', /unknown key 'tensor'/],
  ['a newer format', '#v=4&model=llama3-8b', /format version 4/],
  ['a format 3 link cut after gbs=512', '#v=3&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512', /this link is incomplete: it stops after 'gbs=512'/],
  ['no version', '#model=llama3-8b', /no format version/],
  ['bad percent-encoding', '#v=2&model=%ZZ', /bad percent-encoding/],
  ['format 0 that is not JSON', '#%7Bnot%20json', /not valid JSON|not a JSON object/],
  ['oversized', `#v=2&model=llama3-8b&name=${'x'.repeat(9000)}`, /links over 8192 are refused/],
  ['empty', `${BASE}#`, /holds no scenario/],
];

describe('bad links: the module and the CLI refuse them alike', () => {
  for (const [name, link, message] of bad) {
    test(name, () => {
      const r = fromLink(link);
      assert.ok(r.error, `refused: ${JSON.stringify(r).slice(0, 120)}`);
      assert.match(r.error.message, message);
      const cli = cliEstimateLink(link);
      assert.equal(cli.status, 2, 'the CLI exits 2');
      assert.ok(cli.stderr.includes(r.error.message), `the CLI says ${JSON.stringify(cli.stderr)}`);
    });
  }

  test('a link naming a preset that does not exist reads, and the engine names the preset', () => {
    const link = '#v=2&model=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&node=dgx-h100&nodes=1&gbs=8';
    const r = fromLink(link);
    assert.equal(r.scenario.model, '<img src=x onerror=alert(1)>', 'data, decoded as text');
    const out = JSON.parse(wasm.estimate(JSON.stringify(r.scenario)));
    assert.equal(out.error.code, 'unknown_preset');
    assert.equal(out.error.path, 'model');
    const cli = cliEstimateLink(link);
    assert.equal(cli.status, 2);
    assert.ok(cli.stderr.includes(out.error.message));
  });
});
