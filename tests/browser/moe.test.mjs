// Mixture of experts on the page, in Chromium: the expert-parallel controls (the schema's keys
// with "needs": "model.moe") are hidden for a dense model and left out of its link, shown for a
// MoE preset; a MoE link round-trips and its results show the expert communication part of the
// breakdown and the all-to-all rows of the census, with the CLI's numbers; the custom model form
// shows the attention and MoE objects (collapsed for a dense model, which becomes a mixture of
// experts by filling in its experts); MLA's ranks are hidden for grouped-query attention; MoE
// layers given as a list (Megatron's --moe-layer-freq) are said in their number box; a published
// split of DeepSeek-V3 (PP 8, VPP 4) is a button of the hints at every VPP.
// Screenshots under build/screenshots/.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { CLI, SCENARIO_DIR, cliEstimate, cliEstimateLink, cliLink, cliSearch, jsonDiff, requireBuilt } from '../wasm/common.mjs';
import { assertNumbers, linked, metrics, openAnswered, pageScenario, settle, shootDesktop, suite, watch } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const EXAMPLE = readFileSync(join(SCENARIO_DIR, 'qwen3-30b-a3b_dgx-b200x1_ep8.json'), 'utf8');
const MOE_LINK = 'v=2&model=qwen3-30b-a3b&node=dgx-b200&nodes=1&ep=8&gbs=256&sp=0&rc=selective&do=1&seq=4096';
// The plan controls that mean something only for a model with experts (engine's schema: needs model.moe).
const EXPERT_CONTROLS = ['#f-ep', '#f-etp', '#f-moe_dispatcher', '#f-moe_overlap', '#f-moe_imbalance'];

const fx = suite({ serviceWorkers: 'block' });

async function open(fragment = '') {
  const p = watch(await fx.context.newPage(), fx.problems);
  await p.goto(`${fx.site.url}${fragment ? `#${fragment}` : ''}`);
  await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
  await settle(p);
  return p;
}

/** Whether each selector's field is on show (Advanced opened first: its fields count too). */
async function shown(p, selectors) {
  await p.evaluate(() => { document.querySelector('#advanced').open = true; });
  return Promise.all(selectors.map((s) => p.isVisible(s)));
}

describe('mixture of experts', () => {
  test('expert controls: hidden for llama3-8b and not in its link, shown for a MoE preset', async () => {
    const p = await open('v=2&model=llama3-8b&node=dgx-h100&nodes=1&tp=2&gbs=128');
    assert.deepEqual(await shown(p, EXPERT_CONTROLS), EXPERT_CONTROLS.map(() => false), 'hidden for a dense model');
    assert.equal(await p.isVisible('text=Mixture of experts'), false, 'no expert group in Advanced');
    assert.equal(await p.isVisible('#f-tp'), true);
    assert.doesNotMatch(await linked(p), /[&#](ep|etp|disp|moeo|imb)=/, 'a dense link has no expert key');

    await p.click('#f-model-search');
    await p.fill('#f-model-search', 'qwen3-30b');
    await p.selectOption('#f-model', 'qwen3-30b-a3b');
    await settle(p);
    assert.deepEqual(await shown(p, EXPERT_CONTROLS), EXPERT_CONTROLS.map(() => true), 'shown for a MoE model');
    assert.match(await p.textContent('#model-card'), /128 experts of FFN 768, 8 per token/);
    await p.fill('#f-ep', '2');
    await settle(p);
    assert.match(await linked(p), /&ep=2&/);
    assert.equal((await pageScenario(p)).plan.ep, 2);

    // Back to a dense model: EP leaves the form, the scenario and the link.
    await p.fill('#f-model-search', '');
    await p.selectOption('#f-model', 'llama3-8b');
    await settle(p);
    assert.equal(await p.isVisible('#f-ep'), false);
    assert.equal((await pageScenario(p)).plan.ep, undefined, 'EP left out of a dense scenario');
    assert.doesNotMatch(await linked(p), /[&#]ep=/);
    await p.close();
  });

  test('picking a MoE preset brings its published recipe\'s plan, fitted to the cluster, with a way back', async () => {
    // The default scenario (Llama 3 70B, 64 H100, TP 8 × PP 4 × DP 2) then Qwen3-30B-A3B: its
    // Megatron-Bridge recipe (presets/models/qwen3-30b-a3b.json) runs TP 1, EP 16, flex.
    const p = await open();
    const before = (await pageScenario(p)).plan;
    await p.fill('#f-model-search', 'qwen3-30b');
    await p.selectOption('#f-model', 'qwen3-30b-a3b');
    await settle(p);
    const scenario = await pageScenario(p);
    assert.deepEqual({ tp: scenario.plan.tp, pp: scenario.plan.pp, ep: scenario.plan.ep, etp: scenario.plan.etp,
      moe_dispatcher: scenario.plan.moe_dispatcher, recompute: scenario.plan.recompute, dp: scenario.plan.dp },
    { tp: 1, pp: 1, ep: 16, etp: 1, moe_dispatcher: 'flex', recompute: 'none', dp: undefined });
    assert.equal(scenario.plan.global_batch, before.global_batch, 'the workload stays the user\'s');
    assert.match(await p.textContent('#model-recipe'), /Plan from Megatron-Bridge 26\.04\.01, 16 H100, FP8.*TP 1.*EP 16/);
    const recipe = await metrics(p);
    assertNumbers(cliEstimate(JSON.stringify(scenario)).report, recipe, 'the CLI for the recipe\'s plan');
    // Megatron-Core's defaults on the same layout (alltoall, selective recompute) are slower.
    const defaults = structuredClone(scenario);
    for (const k of ['moe_dispatcher', 'recompute', 'etp', 'moe_overlap']) delete defaults.plan[k];
    assert.ok(cliEstimate(JSON.stringify(defaults)).report.iteration_time_s > 1.2 * recipe.iteration_time_s);

    // On one 8-GPU node the recipe's EP 16 becomes the largest that fits: 8.
    await p.fill('#f-nodes', '1');
    await p.fill('#f-model-search', 'qwen3-235');
    await p.selectOption('#f-model', 'qwen3-235b-a22b');
    await settle(p);
    await p.fill('#f-model-search', 'qwen3-30b');
    await p.selectOption('#f-model', 'qwen3-30b-a3b');
    await settle(p);
    assert.equal((await pageScenario(p)).plan.ep, 8);

    await p.click('#model-recipe-undo');
    await settle(p);
    assert.match(await p.textContent('#model-recipe'), /previous plan is back/);
    assert.equal((await pageScenario(p)).plan.tp, 2, 'Qwen3-235B-A22B\'s recipe on one node: TP 2 (its PP 8 does not fit)');
    await p.close();
  });

  test('a published MoE split from the hints: DeepSeek-V3 at PP 8, then VPP 4, each split a button', async () => {
    // Issue 37 item 3: DeepSeek-V3's 61 layers (a prime) split over no PP but 1 and 61. At PP 8
    // the hint offers 6 and 7 layers on the first and last stages (6 + 6 × 8 + 7 = 61); at VPP 4
    // only Megatron's layout as Megatron-Bridge's DeepSeek-V3 recipe writes it, Et|(tt|)*30mL:
    // chunk 0 the embedding and 1 layer, 30 chunks of 2, the last the MTP module and the loss.
    // Stage s runs chunks s, s + 8, s + 16 and s + 24: stage 0 holds 1 + 2 + 2 + 2 = 7 layers,
    // stage 7 2 + 2 + 2 + 0 = 6, the others 8. Typed VPP 4 after the first split (its 6 layers
    // are no whole number of 4-layer chunks), the layout is offered in its place too.
    const layout = 'Et|(tt|)*30mL';
    const base = 'v=2&model=deepseek-v3&node=dgx-h100&nodes=32&tp=2&pp=8&ep=8&etp=1&gbs=1024&rc=full';
    const fixes = (p, path) => p.locator(`[data-path="${path}"] .fix button.fix-apply`);
    const estimated = async (p, what) => {
      await settle(p);
      const s = await pageScenario(p);
      const r = cliEstimate(JSON.stringify(s), { timeline: false });
      assert.equal(r.status, 0, `${what}: ${r.stderr}`);
      assertNumbers(r.report, await metrics(p), `${what}: the CLI's numbers`);
      return { s, layers: r.report.stages.map((st) => st.layers) };
    };
    const p = await openAnswered(fx, `${fx.site.url}#${base}`);
    assert.deepEqual(await fixes(p, 'plan.pp').allTextContents(), ['Set first stage 6, last 7']);
    await fixes(p, 'plan.pp').click();
    const uneven = await estimated(p, 'first stage 6, last 7');
    assert.deepEqual(uneven.layers, [6, 8, 8, 8, 8, 8, 8, 7]);

    await p.fill('#f-vpp', '4');
    await settle(p);
    assert.match(await p.textContent('#status'), /A stage of 6 layers does not split into VPP 4 chunks \(try: in place of .*Pipeline layout Et\|\(tt\|\)\*30mL/);
    assert.deepEqual(await fixes(p, 'plan.vpp').allTextContents(), [`Set pipeline layout ${layout}`]);
    await fixes(p, 'plan.vpp').click();
    const laid = await estimated(p, 'the layout, from first and last stage layers');
    assert.equal(laid.s.plan.pipeline_layout, layout);
    assert.equal(laid.s.plan.first_stage_layers, undefined, 'the layout replaces them');
    assert.deepEqual(laid.layers, [7, 8, 8, 8, 8, 8, 8, 6]);

    await p.close();
    // PP 8 × VPP 4 opened fresh, as the issue met it: the same button, the same plan.
    const q = await openAnswered(fx, `${fx.site.url}#${base}&vpp=4`);
    assert.deepEqual(await fixes(q, 'plan.vpp').allTextContents(), [`Set pipeline layout ${layout}`]);
    await fixes(q, 'plan.vpp').click();
    assert.deepEqual((await estimated(q, 'the layout, from PP 8 × VPP 4')).s, laid.s);
    await q.close();
  });

  test('a MoE link round-trips with the CLI\'s estimate, expert comm and all-to-all rows', async () => {
    const p = await open(MOE_LINK);
    assert.equal(await p.evaluate(() => window.__stepcast.opened), 'link');
    const link = await linked(p);
    assert.ok(link.includes(`#${MOE_LINK.replace(/^v=2&/, "v=3&")}&`), `the link is kept as it is, in format 3: ${link}`);
    const cli = cliEstimateLink(link);
    assert.equal(cli.status, 0, cli.stderr);
    assertNumbers(cli.report, await metrics(p), 'the CLI for the page\'s link');
    // The same scenario as the example file (the example's name aside): the same estimate.
    const fromFile = cliEstimate(EXAMPLE, { timeline: false });
    assert.equal(fromFile.status, 0, fromFile.stderr);
    assertNumbers(fromFile.report, await metrics(p), 'the CLI for the example');
    assert.equal(await p.inputValue('#f-ep'), '8');

    // Expert comm: a part of the breakdown, with the report's value.
    const part = p.locator('#breakdown tr[data-part="ep_comm"]');
    assert.match(await part.innerText(), /Expert comm/);
    const value = Number(await part.getAttribute('data-value'));
    assert.ok(value > 0);
    assert.deepEqual(jsonDiff(fromFile.report.breakdown_s.ep_comm, value), [], 'expert comm is the report\'s');
    // The census: every row of the report's stage 0, all-to-alls among them.
    const rows = await p.$$eval('#census tbody tr', (trs) => trs.map((tr) => ({
      kind: tr.querySelector('.kind').textContent, group: tr.children[1].textContent,
      total: Number(tr.querySelector('[data-value]').dataset.value) })));
    const want = fromFile.report.stages[0].communication;
    assert.equal(rows.length, want.length);
    assert.ok(rows.some((r) => r.kind === 'all_to_all' && r.group === 'ep (8)'), 'an all-to-all row over EP');
    assert.deepEqual(jsonDiff(want.map((op) => op.total_time_s), rows.map((r) => r.total)), [], 'census totals');
    await shootDesktop(p, 'moe-qwen3-30b-a3b');

    // A fresh page from the link shows the same inputs.
    const q = await open(link.slice(link.indexOf('#') + 1));
    assert.equal(await q.inputValue('#f-ep'), '8');
    assert.deepEqual(jsonDiff(await metrics(p), await metrics(q), { rel: 0, abs: 0 }), []);
    await q.close();
    await p.close();
  });

  test('the MoE example is listed and estimates as the CLI does', async () => {
    const p = await open();
    const option = await p.$$eval('#examples option', (os) => os.find((o) => /Qwen3-30B-A3B/.test(o.textContent))?.value);
    assert.ok(option, 'the MoE example is in the menu');
    await p.selectOption('#examples', option);
    await p.waitForFunction(() => window.__stepcast.latest?.includes('qwen3-30b-a3b'));
    await settle(p);
    assertNumbers(cliEstimate(EXAMPLE, { timeline: false }).report, await metrics(p), 'the example');
    await p.close();
  });

  test('custom model: the MoE and attention objects, a dense model made MoE, MLA ranks only for MLA', async () => {
    const p = await open('v=2&model=llama3-8b&node=dgx-h100&nodes=1&tp=2&gbs=128&do=1&rc=full');
    await p.click('#f-model-mode-custom');
    await settle(p);
    const moe = p.locator('details[data-object="model.moe"]');
    const attention = p.locator('details[data-object="model.attention"]');
    assert.equal(await moe.evaluate((d) => d.open), false, 'collapsed for a dense model');
    assert.equal(await attention.evaluate((d) => d.open), false);
    assert.match(await moe.locator('summary').innerText(), /Mixture of experts · none; fill in Experts, Top-k, Expert FFN size/);
    assert.equal(await p.isVisible('#f-ep'), false);

    // Filling in the experts makes it a mixture of experts: EP shows, the estimate is the CLI's.
    await moe.locator('summary').click();
    assert.equal(await p.isVisible('label:has-text("Expert FFN size")'), true, 'the schema\'s labels');
    await p.fill('#f-m-moe-experts', '8');
    await p.fill('#f-m-moe-top_k', '2');
    await p.fill('#f-m-moe-ffn_hidden', '14336');
    await settle(p);
    assert.equal(await p.isVisible('#f-ep'), true, 'EP for the model with experts');
    await p.fill('#f-ep', '4');
    await settle(p);
    const s = await pageScenario(p);
    assert.deepEqual(s.model.moe, { experts: 8, top_k: 2, ffn_hidden: 14336 });
    assert.equal(s.plan.ep, 4);
    const cli = cliEstimate(JSON.stringify(s), { timeline: false });
    assert.equal(cli.status, 0, cli.stderr);
    assertNumbers(cli.report, await metrics(p), 'the CLI for the custom MoE model');
    assert.ok(await p.isVisible('#breakdown tr[data-part="ep_comm"]'), 'expert comm in the breakdown');
    assert.match(await linked(p), /&m\.moe=.*&ep=4&/);

    // Cleared again, it is dense: no moe object, no EP.
    for (const f of ['experts', 'top_k', 'ffn_hidden']) await p.fill(`#f-m-moe-${f}`, '');
    await settle(p);
    const dense = await pageScenario(p);
    assert.equal(dense.model.moe, undefined);
    assert.equal(dense.plan.ep, undefined);
    assert.equal(await p.isVisible('#f-ep'), false);

    // MLA's ranks: hidden for grouped-query attention, shown for MLA; the window's layers with a window.
    await attention.locator('summary').click();
    assert.equal(await p.isVisible('#f-m-attention-kv_lora_rank'), false);
    assert.equal(await p.isVisible('#f-m-attention-window_layers'), false);
    await p.selectOption('#f-m-attention-type', 'mla');
    await settle(p);
    assert.equal(await p.isVisible('#f-m-attention-kv_lora_rank'), true);
    assert.equal(await p.isVisible('#f-m-attention-q_lora_rank'), true);
    await p.fill('#f-m-attention-window', '128');
    await settle(p);
    assert.equal(await p.isVisible('#f-m-attention-window_layers'), true);
    await p.close();
  });

  test('Faster plans: the CLI\'s plans with their EP, Expert TP and dispatcher; applying one sets them', async () => {
    // Two nodes and the user's EP 16: the leading plans run EP 8 (fewer experts per GPU, inside
    // a node), another EP than the user's, which applying one sets.
    const p = await open(MOE_LINK.replace('nodes=1', 'nodes=2').replace('ep=8', 'ep=16'));
    await p.waitForFunction(() => {
      const s = window.__stepcast;
      return s.latest === s.rendered && s.search.for === s.latest && s.search.state === 'done';
    }, null, { timeout: 30000 });
    const cli = cliSearch(JSON.stringify(await pageScenario(p)), 10);
    assert.equal(cli.status, 0, cli.stderr);
    const rows = await p.$$eval('#search tbody tr', (trs) => trs.map((tr) => ({ plan: JSON.parse(tr.dataset.plan),
      ep: tr.querySelector('[data-label="EP"]')?.textContent ?? null,
      etp: tr.querySelector('[data-label="Expert TP"]')?.textContent ?? null,
      disp: tr.querySelector('[data-label="Token dispatcher"]')?.textContent ?? null, yours: tr.classList.contains('yours') })));
    assert.deepStrictEqual(rows.map((r) => r.plan), cli.result.best.map((b) => b.plan), 'the CLI\'s plans');
    // A column where the plans differ, from one another or from the user's plan (EP, the
    // dispatcher here); one value for all (expert TP 1) is no column.
    const varies = (name) => new Set(rows.map((r) => r.plan[name])).size > 1;
    for (const r of rows) {
      assert.deepEqual([r.ep, r.disp], [String(r.plan.ep), r.plan.moe_dispatcher], 'expert columns');
      assert.equal(r.etp, varies('etp') ? String(r.plan.etp) : null, 'expert TP column only where it varies');
      assert.equal(r.yours, false, 'no plan with another EP is "your plan"');
    }
    // At 1280 px the expert columns still leave Apply in view: no sideways scroll in the card,
    // here (EP, dispatcher, overlap) and on one node (dispatcher, overlap).
    const fits = async (page, what) => {
      await page.setViewportSize({ width: 1280, height: 900 });
      const [table, box] = await page.$eval('#search table', (t) => [t.scrollWidth, t.parentElement.clientWidth]);
      assert.ok(table <= box, `${what}: the plans fit their card at 1280 px (${table} px in ${box} px)`);
    };
    await fits(p, 'two nodes');
    const one = await open(MOE_LINK);
    await one.waitForFunction(() => window.__stepcast.search.state === 'done' && window.__stepcast.search.for === window.__stepcast.latest,
      null, { timeout: 30000 });
    assert.equal(await one.$$eval('#search thead th', (ths) => ths.some((th) => th.textContent.startsWith('Overlap'))), true);
    await fits(one, 'one node');
    await one.close();
    const rank = rows.findIndex((r) => r.plan.ep !== 16);
    assert.ok(rank >= 0, 'a plan with another EP');
    if (await p.isHidden(`#search tbody tr[data-rank="${rank + 1}"]`)) await p.click('#search-more');
    await p.locator(`#search tbody tr[data-rank="${rank + 1}"] .apply`).click();
    await p.waitForFunction(() => window.__stepcast.search.applying === 0);
    await settle(p);
    assert.equal(await p.inputValue('#f-ep'), String(rows[rank].plan.ep));
    assertNumbers(cliEstimate(JSON.stringify(await pageScenario(p)), { timeline: false }).report, await metrics(p), 'the applied plan');
    assert.equal(Number(await p.getAttribute('#metrics [data-metric="iteration_time_s"]', 'data-value')),
      cli.result.best[rank].iteration_time_s, 'the search\'s time for it');
    await p.close();
  });

  test('the embed hides its expert controls for a dense model and leaves them out of its link', async () => {
    const p = watch(await fx.context.newPage(), fx.problems);
    await p.goto(`${fx.site.url}examples/`);
    await p.evaluate((scenario) => {
      const el = document.createElement('stepcast-calculator');
      el.id = 'calc-moe';
      el.setAttribute('scenario', scenario);
      el.setAttribute('controls', 'model,ep,moe_overlap,tp');
      document.querySelector('main').prepend(el);
    }, MOE_LINK);
    const settled = () => p.waitForFunction(() => {
      const el = document.querySelector('#calc-moe');
      const text = el?.scenario && JSON.stringify(el.scenario);
      return el?.dataset.state && el.rendered === text && el.linked === text;
    }, null, { timeout: 20000 });
    await settled();
    const field = (name) => p.locator(`#calc-moe [data-control="${name}"]`);
    assert.equal(await field('ep').isVisible(), true, 'EP for the MoE model');
    assert.equal(await field('moe_overlap').isVisible(), true);
    assert.match(await p.$eval('#calc-moe', (el) => el.link), /&ep=8&/);
    await field('model').selectOption('llama3-8b');
    await settled();
    assert.equal(await field('ep').isVisible(), false, 'no EP for a dense model');
    assert.equal(await field('moe_overlap').isVisible(), false);
    assert.equal(await field('tp').isVisible(), true);
    assert.equal(await p.$eval('#calc-moe', (el) => el.scenario.plan.ep), undefined);
    assert.doesNotMatch(await p.$eval('#calc-moe', (el) => el.link), /[&#]ep=/);
    await p.close();
  });

  test('a MoE preset made custom keeps its experts and attention, open, and estimates the same', async () => {
    const p = await open('v=2&model=deepseek-v2-lite&node=dgx-h100&nodes=2&ep=8&gbs=256&rc=full&do=1&seq=4096');
    const before = await metrics(p);
    await p.click('#f-model-mode-custom');
    await settle(p);
    assert.equal(await p.locator('details[data-object="model.moe"]').evaluate((d) => d.open), true);
    assert.equal(await p.locator('details[data-object="model.attention"]').evaluate((d) => d.open), true);
    assert.equal(await p.inputValue('#f-m-moe-experts'), '64');
    assert.equal(await p.inputValue('#f-m-attention-type'), 'mla');
    assert.equal(await p.inputValue('#f-m-attention-kv_lora_rank'), '512');
    assert.deepEqual(jsonDiff(before, await metrics(p)), [], 'the copy estimates as the preset');
    const s = await pageScenario(p);
    assert.ok(!Object.values(s.model.moe).includes(null), 'no null in the copied experts');
    await p.close();
  });

  test('MoE layers as a list (Megatron\'s --moe-layer-freq): the box says so, and a number typed replaces it', async () => {
    // DeepSeek-V2-Lite's shape, its dense first layer written as a list of 27 (26 MoE layers).
    const model = { name: 'V2-Lite, listed', layers: 27, hidden: 2048, heads: 16, ffn_hidden: 10944, vocab: 102400, seq_len: 4096,
      position: 'rope',
      ffn_type: 'swiglu', norm: 'rmsnorm', bias: false, tied_embeddings: false,
      attention: { type: 'mla', kv_lora_rank: 512, qk_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128 },
      moe: { experts: 64, top_k: 6, ffn_hidden: 1408, shared_experts: 2, shared_ffn_hidden: 1408, layer_freq: [0, ...Array(26).fill(1)] } };
    const scenario = { model, cluster: { node: 'dgx-h100', nodes: 2 }, plan: { ep: 8, global_batch: 256, recompute: 'full' }, seq_len: 4096 };
    const made = cliLink(JSON.stringify(scenario), {});
    assert.equal(made.status, 0, made.stderr);
    const p = await open(made.link.slice(made.link.indexOf('#') + 1));
    assert.equal(await p.inputValue('#f-m-moe-layer_freq'), '');
    assert.equal(await p.getAttribute('#f-m-moe-layer_freq', 'placeholder'), 'list: 26 of 27');
    const cli = cliEstimate(JSON.stringify(scenario), { timeline: false });
    assert.equal(cli.status, 0, cli.stderr);
    assertNumbers(cli.report, await metrics(p));
    // The same as its first layer dense, the preset's way.
    const preset = cliEstimate(JSON.stringify({ ...scenario, model: 'deepseek-v2-lite' }), { timeline: false });
    assert.deepEqual(jsonDiff(preset.report.iteration_time_s, cli.report.iteration_time_s), []);
    // Every other layer MoE, typed: the list gives way to the number, the default placeholder back.
    await p.fill('#f-m-moe-layer_freq', '2');
    await settle(p);
    assert.equal((await pageScenario(p)).model.moe.layer_freq, 2);
    assert.equal(await p.getAttribute('#f-m-moe-layer_freq', 'placeholder'), '1');
    await p.close();
  });
});
