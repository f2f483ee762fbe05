// The built page in Debian's Chromium: it shows the default estimate by itself, follows every
// change with the CLI's numbers for the same scenario, explains invalid plans next to the
// control, shows OOM, re-renders within a frame, works offline after the first load, and logs no
// console errors. Saves screenshots under build/screenshots/.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { CLI, ROOT, SCENARIO_DIR, cliEstimate, cliLink, cliResolve, jsonDiff, messageOf, requireBuilt } from '../wasm/common.mjs';
import { launch, serveSite } from './browser.mjs';
import { DESKTOP, FRAMEWORKS, PHONE, SHOTS, goOffline, plainMessage, reloads, shootDesktop as shootPage, timelineShown } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');
mkdirSync(SHOTS, { recursive: true });

const DEFAULT = JSON.parse(readFileSync(join(SCENARIO_DIR, 'llama3-70b_dgx-h100x8.json'), 'utf8'));
const METRICS = ['iteration_time_s', 'tokens_per_s', 'mfu', 'model_tflops_per_gpu', 'micro_batches', 'parameters'];

let site;
let browser;
let context;
let page;
const problems = []; // console errors and uncaught exceptions, from every page of the suite

function watch(p) {
  p.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  p.on('pageerror', (e) => problems.push(`exception: ${e.message}`));
}

/** Waits until the estimate on screen is the one for the scenario the form shows. */
async function settle(p = page) {
  await p.waitForFunction(() => {
    const s = window.__stepcast;
    return s && s.latest !== undefined && s.latest === s.rendered;
  }, null, { timeout: 15000 });
}

async function pageScenario(p = page) {
  return JSON.parse(await p.textContent('#scenario-json'));
}

async function metrics(p = page) {
  const out = {};
  for (const k of METRICS) out[k] = Number(await p.getAttribute(`[data-metric="${k}"]`, 'data-value'));
  return out;
}

/** The page's numbers must be the CLI's for `expected`, and the page must have sent an equivalent scenario. */
async function expectCliNumbers(expected, p = page) {
  const cli = cliEstimate(JSON.stringify(expected));
  assert.equal(cli.status, 0, cli.stderr);
  const shown = await metrics(p);
  const want = Object.fromEntries(METRICS.map((k) => [k, cli.report[k]]));
  assert.deepEqual(jsonDiff(want, shown), [], 'headline numbers differ from the CLI');
  // Breakdown, memory: every number on the page comes from the same report.
  const parts = await p.$$eval('[data-part]', (rows) => rows.map((r) => [r.dataset.part, Number(r.dataset.value)]));
  for (const [k, v] of parts) assert.deepEqual(jsonDiff(cli.report.breakdown_s[k], v), [], `breakdown ${k}`);
  const mem = await p.$$eval('.mem-row', (rows) => rows.map((r) => Number(r.dataset.total)));
  assert.deepEqual(jsonDiff(cli.report.stages.map((s) => s.memory_bytes.total), mem), [], 'memory per stage');
  // The scenario the page sent gives the same report as the expected one.
  const sent = cliEstimate(JSON.stringify(await pageScenario(p)));
  assert.equal(sent.status, 0, sent.stderr);
  assert.deepEqual(jsonDiff(cli.report, sent.report), [], 'the page sent a different scenario');
  return cli.report;
}

const shootDesktop = (name, p = page) => shootPage(p, name);

/** Every flag of profile `id` shows the engine's value for `scenario`, marked by where it comes from. */
async function expectFlags(scenario, id, name) {
  const resolved = cliResolve(JSON.stringify(scenario));
  assert.equal(resolved.status, 0, resolved.errors.join('\n'));
  for (const k of Object.keys(FRAMEWORKS[id].plan)) {
    const want = resolved.resolved.scenario.plan[k];
    const shown = typeof want === 'boolean' ? await page.isChecked(`#f-${k}`) : await page.inputValue(`#f-${k}`);
    assert.equal(shown, typeof want === 'boolean' ? want : String(want), `${k}: the engine's value`);
    assert.equal(await page.isVisible(`#f-${k}-origin`), true, `${k}: its origin shows`);
    assert.equal(await page.innerText(`#f-${k}-origin`),
      scenario.plan[k] === undefined ? `from ${name}` : `set in the plan · use ${name}'s`, k);
  }
}

/**
 * Chooses an example from the menu and waits for its estimate (the page loads it asynchronously:
 * settle() alone would pass on the scenario still on show).
 */
async function openExample(value) {
  await reloads(page, () => page.selectOption('#examples', value));
}

async function openDefault() {
  await openExample(await page.$eval('#examples', (s) => [...s.options].find((o) => o.value.includes('llama3-70b_dgx-h100x8'))?.value));
}

/** Opens a scenario as a pasted link does. */
async function openScenario(scenario) {
  const made = cliLink(JSON.stringify(scenario), {});
  assert.equal(made.status, 0, made.stderr);
  const opens = await page.evaluate(() => window.__stepcast.opens);
  await page.evaluate((fragment) => { location.hash = fragment; }, made.link.slice(made.link.indexOf('#')));
  await page.waitForFunction((n) => window.__stepcast.opens > n, opens);
  await settle();
}

async function setValue(selector, value) {
  await page.fill(selector, String(value));
  await settle();
}

const withPlan = (s, plan) => {
  const out = structuredClone(s);
  Object.assign(out.plan, plan);
  for (const [k, v] of Object.entries(plan)) if (v === undefined) delete out.plan[k];
  return out;
};

before(async () => {
  site = await serveSite();
  browser = await launch();
  context = await browser.newContext({ viewport: DESKTOP });
  page = await context.newPage();
  watch(page);
});

after(async () => {
  await browser?.close();
  await site?.close();
});

describe('the page', () => {
  test('shows the default estimate without any input', async () => {
    const t0 = Date.now();
    await page.goto(site.url);
    await page.waitForSelector('[data-metric="iteration_time_s"]', { timeout: 20000 });
    await settle();
    console.log(`first estimate on screen ${Date.now() - t0} ms after navigation`);
    const noDp = withPlan(DEFAULT, { dp: undefined });
    await expectCliNumbers(noDp);
    assert.equal((await pageScenario()).plan.dp, undefined, 'dp is left to the engine');
    assert.equal(await page.inputValue('#f-dp'), '2', 'the derived DP is shown');
    assert.equal(await page.locator('.mem-row').count(), DEFAULT.plan.pp);
    assert.ok(await page.locator('#timeline canvas').count() === 1, 'a timeline is drawn');
    assert.ok(await page.locator('.census tbody tr').count() > 3, 'the census has rows');
    await shootDesktop('desktop');
  });

  test('follows TP, PP, model and node count with the CLI\'s numbers', async () => {
    let expected = withPlan(DEFAULT, { dp: undefined, tp: 4 });
    await setValue('#f-tp', 4);
    await expectCliNumbers(expected);
    assert.equal(await page.inputValue('#f-dp'), '4');

    expected = withPlan(expected, { pp: 8 });
    await setValue('#f-pp', 8);
    await expectCliNumbers(expected);

    expected = { ...expected, model: 'llama2-70b' };
    await page.selectOption('#f-model', 'llama2-70b');
    await settle();
    await expectCliNumbers(expected);

    expected = { ...expected, cluster: { node: 'dgx-h100', nodes: 16 } };
    await setValue('#f-nodes', 16);
    await expectCliNumbers(expected);
    assert.equal(await page.inputValue('#f-dp'), '4');
  });

  test('explains an invalid plan next to its control and stays usable', async () => {
    const bad = { model: 'llama2-70b', cluster: { node: 'dgx-h100', nodes: 16 },
      plan: { ...DEFAULT.plan, dp: undefined, tp: 16, pp: 8 }, seq_len: DEFAULT.seq_len };
    const cli = cliEstimate(JSON.stringify(bad));
    assert.equal(cli.status, 2);
    const message = messageOf(cli.stderr);
    const problem = cliResolve(JSON.stringify(bad)).problems[0];
    assert.equal(problem.message, message, 'resolve\'s first problem is the one estimate refuses with');
    await setValue('#f-tp', 16);
    const error = page.locator('[data-path="plan.tp"] .error');
    assert.equal(await error.isVisible(), true, 'the message sits next to TP');
    assert.equal(await error.textContent(), plainMessage(problem), 'the engine\'s rule in the page\'s words');
    assert.equal(await error.locator('.msg').getAttribute('title'), `Engine: ${message}`, 'the engine\'s own words on hover');
    assert.equal(await page.getAttribute('#f-tp', 'aria-invalid'), 'true');
    assert.match(await page.textContent('#status'), /Invalid plan/);
    assert.equal(await page.inputValue('#f-tp'), '16', 'the value is not corrected');
    await page.evaluate(() => { window.scrollTo(0, 0); document.querySelector('[data-path="plan.tp"]').scrollIntoView({ block: 'center' }); });
    await page.screenshot({ path: join(SHOTS, 'invalid-plan.png') });

    // A product that does not match the GPUs: the message sits next to DP.
    await page.uncheck('#f-dp-auto');
    await setValue('#f-tp', 4);
    await setValue('#f-dp', 3);
    const dpError = page.locator('[data-path="plan.dp"] .error');
    assert.equal(await dpError.locator('.msg').first().textContent(), 'TP 4 × PP 8 × CP 1 × DP 3 = 96 GPUs, but the cluster has 128');
    await page.check('#f-dp-auto');
    await settle();

    // Fixed from the keyboard: the estimate is back, and the error is gone.
    await page.focus('#f-tp');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('8');
    await settle();
    assert.equal(await error.isVisible(), false);
    assert.equal(await page.isVisible('#status'), false);
    await expectCliNumbers({ ...bad, plan: { ...bad.plan, tp: 8, dp: undefined } });

    // An empty field is stopped before the engine, with a message at the field.
    await page.fill('#f-global_batch', '');
    await settle();
    assert.equal(await page.locator('[data-path="plan.global_batch"] .error').isVisible(), true);
    await setValue('#f-global_batch', DEFAULT.plan.global_batch);
    assert.equal(await page.locator('.field.invalid').count(), 0);
  });

  test('marks the control the user changed, with every problem the engine has and its hint', async () => {
    await openDefault();
    const base = withPlan(DEFAULT, { dp: undefined });
    const messages = async (path) => page.$$eval(`[data-path="${path}"] > .error .msg`, (els) => els.map((e) => e.textContent));
    const invalid = () => page.$$eval('#inputs .field.invalid', (els) => els.map((e) => e.dataset.path));
    // DP is derived: the rule's path is plan.dp, but the user changed the nodes, then PP.
    for (const [selector, path, scenario] of [
      ['#f-nodes', 'cluster.nodes', { ...base, cluster: { node: 'dgx-h100', nodes: 7 } }],
      ['#f-pp', 'plan.pp', withPlan(base, { pp: 5 })],
    ]) {
      const value = path === 'cluster.nodes' ? 7 : 5;
      await setValue(selector, value);
      const want = cliResolve(JSON.stringify(scenario));
      assert.equal(want.status, 2);
      assert.deepEqual(await messages(path), want.problems.map(plainMessage), `${path}: the engine's messages at the control changed`);
      assert.deepEqual(await invalid(), [path], `${path}: never the read-only DP`);
      assert.equal(await page.inputValue('#f-dp'), '', 'no derived DP while the plan is refused');
      assert.match(await page.textContent('#status'), /Invalid plan/);
      await setValue(selector, path === 'cluster.nodes' ? 8 : 4);
      assert.equal(await page.inputValue('#f-dp'), '2');
    }
    // TP 3 breaks several rules: every one is shown, at TP when the rule involves it (the control
    // changed), else at the rule's own field; with the engine's hint of the values that would do.
    await setValue('#f-tp', 3);
    const tp3 = cliResolve(JSON.stringify(withPlan(base, { tp: 3 })));
    assert.ok(tp3.errors.length > 2);
    const all = await page.$$eval('#inputs .field.invalid > .error .msg', (els) => els.map((e) => e.textContent));
    assert.deepEqual(all.sort(), tp3.problems.map(plainMessage).sort(), 'every problem, once');
    assert.ok((await messages('plan.tp')).length >= 3, 'the rules about TP at TP');
    assert.equal(await page.textContent('[data-path="plan.tp"] > .fix'), 'Try: TP 1, 2, 4 or 8.');
    assert.match(await page.textContent('#status'), new RegExp(`and ${tp3.errors.length - 1} more problems`));
    await setValue('#f-tp', 8);
    assert.deepEqual(await invalid(), []);
    // A custom model: heads 50 breaks hidden ÷ heads (path model.hidden): Heads is marked.
    await page.check('#f-model-mode-custom');
    await setValue('#f-m-heads', 50);
    assert.match((await messages('model.heads')).join('\n'), /Heads 50 does not divide the hidden size 8,192/);
    assert.ok(!(await invalid()).includes('model.hidden'), 'not Hidden size');
    await page.check('#f-model-mode-preset');
    await settle();
    assert.deepEqual(await invalid(), []);
    await expectCliNumbers(base);
  });

  test('shows a plan that does not fit in memory as OOM', async () => {
    const oom = JSON.parse(readFileSync(join(SCENARIO_DIR, 'llama2-70b_dgx-a100x2_oom.json'), 'utf8'));
    const path = await page.$eval('#examples', (s) => [...s.options].find((o) => o.value.includes('_oom'))?.value);
    assert.ok(path, 'the OOM example is listed');
    await openExample(path);
    const report = await expectCliNumbers(oom);
    assert.equal(report.fits, false);
    assert.match(await page.getAttribute('#status', 'class'), /\boom\b/);
    assert.match(await page.textContent('#status'), /Out of memory/);
    const bad = page.locator('.mem-row.oom');
    assert.equal(await bad.count(), report.stages.filter((s) => !s.fits).length);
    assert.match(await bad.first().textContent(), /does not fit/);
    const color = await bad.first().locator('.bad').evaluate((el) => getComputedStyle(el).color);
    const [r, g, b] = color.match(/\d+/g).map(Number);
    assert.ok(r > 150 && g < 100 && b < 100, `the OOM text is red (${color})`);
    await shootDesktop('oom');
  });

  test('every example loads and gives the CLI\'s numbers', async () => {
    const options = await page.$$eval('#examples option', (os) => os.map((o) => o.value).filter(Boolean));
    const files = readdirSync(SCENARIO_DIR).filter((f) => f.endsWith('.json'));
    assert.equal(options.length, files.length);
    for (const value of options) {
      await openExample(value);
      const file = files.find((f) => value.endsWith(`/${f}`));
      const scenario = JSON.parse(readFileSync(join(SCENARIO_DIR, file), 'utf8'));
      await expectCliNumbers(scenario);
    }
  });

  test('custom model and custom cluster give the same numbers as the presets they copy', async () => {
    await openDefault();
    const preset = await metrics();
    await page.check('#f-model-mode-custom');
    await settle();
    await page.check('#f-cluster-mode-custom');
    await settle();
    const sent = await pageScenario();
    assert.equal(typeof sent.model, 'object', 'an inline model');
    assert.equal(sent.cluster.gpu, 'h100-sxm5-80gb');
    assert.equal(sent.cluster.gpus_per_node, 8);
    await expectCliNumbers(sent);
    assert.deepEqual(jsonDiff(preset, await metrics()), []);
    // "Custom GPU…": a copy of the H100 with the keys the page has no field for (its SM count,
    // measured GEMM rates) estimates as the preset; a peak typed over it scales its measured rate.
    await page.selectOption('#f-gpu', '__custom__');
    await settle();
    const copied = (await pageScenario()).cluster.gpu;
    assert.equal(copied.name, 'NVIDIA H100 SXM5 80GB (custom)');
    assert.deepEqual([copied.sm_count, copied.measured.gemm_tflops.bf16], [132, 794.5]);
    assert.equal(copied.source, undefined, 'the preset\'s documentation stays with it');
    assert.deepEqual(jsonDiff(preset, await metrics()), [], 'the copy estimates as the preset');
    await setValue('#f-g-peak-bf16', 494.7);
    const halved = (await pageScenario()).cluster.gpu.measured.gemm_tflops.bf16;
    assert.ok(Math.abs(halved - 794.5 / 2) < 1e-9, `half the peak, half the measured rate (${halved})`);
    await expectCliNumbers(await pageScenario());
    await page.selectOption('#f-gpu', 'h100-sxm5-80gb');
    await settle();
    // A plan that offloads the optimizer to the host: the node's host link is copied too (it has
    // no field; without it the engine refused the copy).
    await page.check('#f-cluster-mode-preset');
    await openScenario({ model: 'llama3-70b', cluster: { node: 'dgx-h100', nodes: 8 }, seq_len: 4096,
      plan: { tp: 8, pp: 4, global_batch: 512, optimizer_cpu_offload: true, optimizer_offload_fraction: 1 } });
    const offloading = await metrics();
    await page.check('#f-cluster-mode-custom');
    await settle();
    assert.equal((await pageScenario()).cluster.host_link_GBps_per_dir, 63);
    assert.equal(await page.isVisible('#status'), false, 'no error');
    assert.deepEqual(jsonDiff(offloading, await metrics()), [], 'the copy estimates as the node');
    await openDefault();
    await page.check('#f-model-mode-custom');
    await page.check('#f-cluster-mode-custom');
    await settle();
    // An engine rule on a custom field lands next to the field just changed: the rule's path is
    // model.hidden, but it involves the heads, which the user changed.
    await setValue('#f-m-heads', 3);
    assert.match(await page.textContent('[data-path="model.heads"] .error'), /Heads 3 does not divide the hidden size/);
    assert.equal(await page.locator('[data-path="model.hidden"].invalid').count(), 0, 'not at Hidden size');
    await page.check('#f-model-mode-preset');
    await page.check('#f-cluster-mode-preset');
    await settle();
    assert.deepEqual(jsonDiff(preset, await metrics()), []);
  });

  test('says so when a schedule is too large for a timeline, and draws a schematic of it', async () => {
    await setValue('#f-global_batch', 16384);
    await timelineShown(page);
    const note = page.locator('#timeline [data-timeline="schematic"]');
    assert.equal(await note.isVisible(), true);
    assert.equal(await page.locator('#timeline canvas').isVisible(), true);
    await expectCliNumbers({ ...withPlan(DEFAULT, { dp: undefined, global_batch: 16384 }) });
    await setValue('#f-global_batch', DEFAULT.plan.global_batch);
    await timelineShown(page);
    assert.equal(await page.locator('#timeline canvas').isVisible(), true);
    assert.equal(await page.getAttribute('#timeline > .hint', 'data-timeline'), 'events', 'the engine\'s blocks again');
  });

  test('the timeline\'s events are asked for as its card comes on screen, for the plan on show', async () => {
    await openDefault();
    // At the top, and two frames for the card's observer to see it leave the screen's reach.
    await page.evaluate(() => new Promise((done) => { window.scrollTo(0, 0); requestAnimationFrame(() => requestAnimationFrame(done)); }));
    // Away from the card, an edit's report comes without the schedule's events (issue 39) and
    // the card, greyed, says it is busy; printed meanwhile, it says the timeline is not drawn.
    await setValue('#f-global_batch', 1024);
    assert.equal(await page.getAttribute('#timeline', 'aria-busy'), 'true');
    assert.equal(await page.evaluate(() => window.__stepcast.engine.received.blocks), 0, 'no events sent');
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.isVisible('#timeline .timeline-pending'), true, 'printed, it says so');
    assert.equal(await page.isVisible('#timeline .timeline-chart'), false, 'and prints no other plan\'s chart');
    await page.emulateMedia({ media: 'screen' });
    assert.equal(await page.isVisible('#timeline .timeline-pending'), false);
    // On screen, it asks for them: the CLI's blocks for that plan (twice the micro-batches).
    await timelineShown(page);
    const cli = cliEstimate(JSON.stringify(await pageScenario()));
    assert.equal(cli.status, 0, cli.stderr);
    const blocks = (label) => Number(label.match(/, ([\d,]+) blocks over/)[1].replace(/,/g, ''));
    assert.equal(blocks(await page.getAttribute('#timeline canvas', 'aria-label')), cli.report.timeline.events.length);
    assert.equal(cli.report.timeline.events.filter((e) => e.kind === 'forward').length, 4 * 1024 / 2, 'a forward per stage and micro-batch');
    // An edit with the card on screen (typed without scrolling to the field) brings its events at once.
    await page.evaluate((v) => {
      const el = document.querySelector('#f-global_batch');
      el.value = v;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }, String(DEFAULT.plan.global_batch));
    await settle();
    assert.equal(await page.getAttribute('#timeline', 'aria-busy'), 'false');
    assert.ok(await page.evaluate(() => window.__stepcast.engine.received.blocks) > 0, 'events sent with the estimate');
    const back = cliEstimate(JSON.stringify(await pageScenario()));
    assert.equal(blocks(await page.getAttribute('#timeline canvas', 'aria-label')), back.report.timeline.events.length);
    assert.equal(back.report.timeline.events.filter((e) => e.kind === 'forward').length, 4 * 512 / 2);
  });

  test('names the training software a newcomer gets, and shows each of its flags with where it comes from', async () => {
    await openDefault();
    // Llama 3 70B on 8 DGX H100 (the default), TP 4, PP 4, VPP 5, and nothing else.
    await setValue('#f-tp', 4);
    await setValue('#f-vpp', 5);
    const scenario = withPlan(DEFAULT, { dp: undefined, tp: 4, vpp: 5 });
    await expectCliNumbers(scenario);
    assert.equal((await pageScenario()).plan.framework, undefined, 'left to the engine');
    assert.equal(await page.inputValue('#f-framework'), 'megatron-core');
    assert.match(await page.$eval('#f-framework', (s) => s.selectedOptions[0].textContent), /^Megatron-Core \(/);
    assert.equal(await page.isVisible('#f-framework'), true, 'on the page without opening anything');
    assert.match(await page.textContent('#f-framework-hint'), /The default\. It sets every flag marked “from Megatron-Core”/);
    // Named with the estimate too, in the first screen; "change" goes to the menu.
    assert.match(await page.textContent('#software'), /^Training software: Megatron-Core \(NeMo, .*\), the default · change$/);
    assert.equal(await page.isVisible('#software'), true);
    await page.click('#software button');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'f-framework');
    // Every flag of the profile: the engine's value, "from Megatron-Core" unless the plan sets it.
    await page.click('details.advanced summary');
    await expectFlags(scenario, 'megatron-core', 'Megatron-Core');
    assert.match(await page.textContent('#advanced-note'), /12 flags from Megatron-Core, 2 set in the plan/);
    // A flag's tooltip: the profile's value and its source.
    await page.focus('[data-path="plan.tp_comm_overlap"] .tip');
    assert.match(await page.textContent('#tooltip'), new RegExp(`Megatron-Core: on\\. Source: ${FRAMEWORKS['megatron-core'].plan.tp_comm_overlap.source.slice(0, 40).replace(/[().]/g, '.')}`));
    await page.keyboard.press('Escape');
    await page.focus('[data-path="plan.fp8_param_gather"] .tip');
    assert.match(await page.textContent('#tooltip'), /Megatron-Core: on\..*With this plan the engine takes off\./s, 'bf16: no fp8 gather');
    await page.keyboard.press('Escape');

    // Another profile: its flags, its values.
    await page.selectOption('#f-framework', 'deepspeed');
    await settle();
    const ds = withPlan(scenario, { framework: 'deepspeed' });
    await expectCliNumbers(ds);
    await expectFlags(ds, 'deepspeed', 'DeepSpeed ZeRO');
    assert.equal(await page.inputValue('#f-zero_stage'), '3');
    assert.match(await page.textContent('#f-framework-hint'), /^It sets every flag marked “from DeepSpeed ZeRO”/);
    assert.match(await page.textContent('#software'), /^Training software: DeepSpeed ZeRO \(stages 1-3\) · change$/);
    // A flag it cannot do: the engine's message at the flag; back to the profile's value with one click.
    await page.check('#f-cuda_graphs');
    await settle();
    const refused = cliResolve(JSON.stringify(withPlan(ds, { cuda_graphs: true })));
    assert.equal(refused.status, 2);
    assert.deepEqual(await page.$$eval('[data-path="plan.cuda_graphs"] > .error .msg', (els) => els.map((e) => e.textContent)), refused.problems.map(plainMessage));
    assert.match(await page.innerText('#f-cuda_graphs-origin'), /set in the plan · use DeepSpeed ZeRO's/);
    await page.click('#f-cuda_graphs-origin button');
    await settle();
    assert.equal((await pageScenario()).plan.cuda_graphs, undefined);
    assert.equal(await page.isChecked('#f-cuda_graphs'), false);
    assert.equal(await page.innerText('#f-cuda_graphs-origin'), 'from DeepSpeed ZeRO');
    await expectCliNumbers(ds);

    // Back to Megatron-Core, and every flag to its values (the example's own ones too).
    await page.selectOption('#f-framework', 'megatron-core');
    await settle();
    await page.click('#flags-reset');
    await settle();
    const sent = await pageScenario();
    for (const k of Object.keys(FRAMEWORKS['megatron-core'].plan)) assert.equal(sent.plan[k], undefined, k);
    await expectCliNumbers(withPlan(scenario, { framework: 'megatron-core', sequence_parallel: undefined, distributed_optimizer: undefined }));
    await expectFlags(sent, 'megatron-core', 'Megatron-Core');
    assert.equal(await page.isVisible('#flags-reset'), false);
    // The ZeRO stage and the distributed optimizer say one thing (rule optimizer_sharding): the
    // one changed sets the other, which the plan leaves out, so the two never contradict.
    await page.check('#f-distributed_optimizer');
    await settle();
    await page.selectOption('#f-zero_stage', '0');
    await settle();
    const unsharded = await pageScenario();
    assert.equal(unsharded.plan.zero_stage, 0);
    assert.equal(unsharded.plan.distributed_optimizer, undefined);
    assert.equal(await page.isChecked('#f-distributed_optimizer'), false);
    await expectCliNumbers(unsharded);
    await page.click('#flags-reset');
    await settle();
    await page.click('details.advanced summary');
  });

  test('Blackwell nodes and the mxfp8 and nvfp4 precisions come from the engine', async () => {
    await openDefault();
    const base = withPlan(DEFAULT, { dp: undefined });
    for (const node of ['dgx-b300', 'gb300-nvl72']) {
      assert.ok(await page.$(`#f-node option[value="${node}"]`), `${node} is in the node menu`);
    }
    for (const precision of ['mxfp8', 'nvfp4']) {
      assert.ok(await page.$(`#f-precision option[value="${precision}"]`), `${precision} is in the precision menu`);
    }
    await page.selectOption('#f-node', 'dgx-b300');
    await settle();
    await page.selectOption('#f-precision', 'nvfp4');
    await settle();
    const b300 = { ...withPlan(base, { precision: 'nvfp4' }), cluster: { node: 'dgx-b300', nodes: 8 } };
    await expectCliNumbers(b300);
    // On an H100 the engine refuses it, at the menu just changed.
    await page.selectOption('#f-node', 'dgx-h100');
    await settle();
    const refused = cliResolve(JSON.stringify({ ...b300, cluster: DEFAULT.cluster }));
    assert.equal(refused.status, 2);
    const shown = await page.$$eval('#inputs .field.invalid > .error .msg', (els) => els.map((e) => e.textContent));
    assert.deepEqual(shown.sort(), refused.problems.map(plainMessage).sort());
    await page.selectOption('#f-precision', 'bf16');
    await settle();
    await expectCliNumbers(base);
  });

  test('shows the time the GPU waits for the CPU to launch kernels ("CPU launches")', async () => {
    // DeepSpeed runs eager PyTorch: many small kernels per layer; with short sequences the GPU waits.
    const eager = { model: 'llama3-8b', cluster: { node: 'dgx-h100', nodes: 1 }, seq_len: 128,
      plan: { tp: 8, global_batch: 64, framework: 'deepspeed', zero_stage: 1 } };
    await openScenario(eager);
    const report = await expectCliNumbers(eager);
    assert.ok(report.breakdown_s.host > 0, 'the engine has the GPU wait');
    const row = page.locator('#breakdown [data-part="host"]');
    assert.match(await row.textContent(), /CPU launches/);
    await row.locator('.tip').focus();
    assert.match(await page.textContent('#tooltip'), /launch/);
    await page.keyboard.press('Escape');
    await openDefault();
    assert.match(await page.textContent('#breakdown p.hint'), /cpu launches/, 'zero in the default plan');
  });

  test('a zero-bubble schedule draws its split backward: B in the backward\'s colour, W on its own', async () => {
    const zb = { model: 'llama3-8b', cluster: { node: 'dgx-h100', nodes: 1 },
      plan: { tp: 2, pp: 4, global_batch: 32, schedule: 'zero_bubble' } };
    await openScenario(zb);
    await expectCliNumbers(zb);
    await timelineShown(page);
    const legend = await page.textContent('#timeline .legend');
    assert.match(legend, /input gradients \(B\)/);
    assert.match(legend, /weight gradients \(W\)/);
    assert.doesNotMatch(legend, /other/, 'every block the engine sends has a kind the page knows');
    const swatches = await page.$$eval('#timeline .legend li', (items) => Object.fromEntries(items.map((li) =>
      [li.textContent, getComputedStyle(li.querySelector('.swatch')).backgroundColor])));
    const colour = (re) => Object.entries(swatches).find(([label]) => re.test(label))?.[1];
    const backward = await page.evaluate(() => {
      const probe = document.body.appendChild(Object.assign(document.createElement('span'), { style: 'background: var(--c-backward)' }));
      const c = getComputedStyle(probe).backgroundColor;
      probe.remove();
      return c;
    });
    assert.equal(colour(/input gradients/), backward);
    assert.notEqual(colour(/weight gradients/), colour(/input gradients/));
    await openDefault();
  });

  test('first and last stage layers: the engine\'s split on show, and rows per stage from it', async () => {
    await openDefault();
    await setValue('#f-tp', 4);
    await page.click('details.advanced summary');
    assert.equal(await page.getAttribute('#f-first_stage_layers', 'placeholder'), null);
    assert.match(await page.textContent('#f-first_stage_layers-hint'), /empty: the even share/);
    await setValue('#f-first_stage_layers', 17);
    const uneven = withPlan(DEFAULT, { dp: undefined, tp: 4, first_stage_layers: 17 });
    const report = await expectCliNumbers(uneven);
    assert.deepEqual(report.stages.map((st) => st.layers), [17, 21, 21, 21]);
    assert.equal(await page.isVisible('#stagemap-card'), true, 'the stage map shows an uneven split');
    assert.deepEqual(await page.$$eval('#stagemap .sm-stage', (els) => els.map((e) => Number(e.dataset.layers))), [17, 21, 21, 21]);
    // Layers per stage: a row per stage from the engine's split; the first stage's layers put aside.
    await page.check('#f-uneven');
    await settle();
    const rows = await pageScenario();
    assert.equal(rows.plan.first_stage_layers, undefined);
    assert.deepEqual(rows.plan.stages, [17, 21, 21, 21].map((layers) => ({ group: 0, layers })));
    assert.deepEqual(jsonDiff(report.iteration_time_s, (await expectCliNumbers(rows)).iteration_time_s), []);
    await page.uncheck('#f-uneven');
    await settle();
    assert.equal((await pageScenario()).plan.first_stage_layers, 17, 'back with the even split');
    await expectCliNumbers(uneven);
    // Empty: the engine's even share again.
    await setValue('#f-first_stage_layers', '');
    assert.equal((await pageScenario()).plan.first_stage_layers, undefined);
    assert.equal(await page.isVisible('#stagemap-card'), false);
    await expectCliNumbers(withPlan(DEFAULT, { dp: undefined, tp: 4 }));
    await page.click('details.advanced summary');
  });

  test('a PP that does not divide the layers: the splits that would, each a button that sets it', async () => {
    // Llama 3 70B's 80 layers on PP 3: the engine offers the loss as a layer, or 26 and 27
    // layers on the first and last stages (27 on the middle one), under Advanced (issue 37).
    await openScenario(withPlan({ ...DEFAULT, cluster: { ...DEFAULT.cluster, nodes: 3 } }, { dp: undefined, pp: 1, global_batch: 384 }));
    await setValue('#f-pp', '3');
    const fixes = page.locator('[data-path="plan.pp"] .fix button.fix-apply');
    assert.deepEqual(await fixes.allTextContents(), ['Set first stage 26, last 27', 'Set loss as a layer']);
    await fixes.first().click();
    await settle();
    const split = await pageScenario();
    assert.equal(split.plan.first_stage_layers, 26);
    assert.equal(split.plan.last_stage_layers, 27);
    const report = await expectCliNumbers(split);
    assert.deepEqual(report.stages.map((st) => st.layers), [26, 27, 27]);
    assert.equal(await page.isVisible('[data-path="plan.pp"] .fix'), false, 'no problem left');
  });

  test('pipeline layout and rank order: text the engine reads, its refusal under the field, empty gives it back', async () => {
    await openDefault();
    await page.click('details.advanced summary');
    assert.equal(await page.inputValue('#f-pipeline_layout'), '', 'no layout: the even split');
    assert.equal(await page.inputValue('#f-rank_order'), 'tp-cp-ep-dp-pp', "the engine's rank order");
    // Megatron's layout string: the embedding with 19 layers first, the loss after the last 20.
    const layout = 'Et*19|t*21|t*20|t*20L';
    await setValue('#f-pipeline_layout', layout);
    const report = await expectCliNumbers(withPlan(DEFAULT, { dp: undefined, pipeline_layout: layout }));
    assert.deepEqual(report.stages.map((st) => st.layers), [19, 21, 20, 20]);
    assert.deepEqual(await page.$$eval('#stagemap .sm-stage', (els) => els.map((e) => Number(e.dataset.layers))), [19, 21, 20, 20]);
    // 79 layers for an 80-layer model: the engine's message under the field, no number on show.
    await setValue('#f-pipeline_layout', 'Et*19|t*20|t*20|t*20L');
    assert.equal(await page.isVisible('#f-pipeline_layout-error'), true);
    assert.match(await page.textContent('#f-pipeline_layout-error'), /layout/i);
    await setValue('#f-pipeline_layout', '');
    assert.equal((await pageScenario()).plan.pipeline_layout, undefined, 'empty: no layout');
    // Pipeline ranks innermost but one (Megatron's --use-tp-pp-dp-mapping), then a rank order
    // that names no dp or pp.
    await setValue('#f-rank_order', 'tp-cp-ep-pp-dp');
    await expectCliNumbers(withPlan(DEFAULT, { dp: undefined, rank_order: 'tp-cp-ep-pp-dp' }));
    await setValue('#f-rank_order', 'tp-cp-ep');
    assert.match(await page.textContent('#f-rank_order-error'), /must name tp, cp, ep, dp and pp once each/);
    await setValue('#f-rank_order', ' ');
    assert.equal((await pageScenario()).plan.rank_order, undefined, 'blank: the default order');
    await expectCliNumbers(withPlan(DEFAULT, { dp: undefined }));
    await page.click('details.advanced summary');
  });

  test('re-render time of each change (printed; budget: one frame, 16 ms)', async () => {
    await openDefault();
    await page.evaluate(() => performance.clearMeasures('stepcast:update'));
    const values = [4, 8, 2, 8];
    const rounds = 40;
    const parts = { engine: [], worker: [], render: [] };
    for (let i = 0; i < rounds; i++) {
      if (i % 2) await page.fill('#f-tp', String(values[(i >> 1) % values.length]));
      else await page.fill('#f-micro_batch', String(1 + (i % 4 === 0 ? 1 : 0)));
      await settle();
      const s = await page.evaluate(() => window.__stepcast);
      parts.engine.push(s.lastEngineMs);
      parts.worker.push(s.lastWorkerMs);
      parts.render.push(s.lastRenderMs);
    }
    const median = (xs) => xs.filter(Number.isFinite).sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
    const ms = (await page.evaluate(() => performance.getEntriesByName('stepcast:update').map((e) => e.duration)))
      .sort((a, b) => a - b);
    assert.ok(ms.length >= rounds - 2, `measured ${ms.length} updates`);
    const q = (f) => ms[Math.min(ms.length - 1, Math.floor(f * ms.length))];
    console.log(`re-render, input event to rendered result (${ms.length} changes): ` +
      `median ${q(0.5).toFixed(1)} ms, p90 ${q(0.9).toFixed(1)} ms, max ${ms[ms.length - 1].toFixed(1)} ms ` +
      `(medians: engine ${median(parts.engine).toFixed(1)} ms, whole worker ${median(parts.worker).toFixed(1)} ms, ` +
      `page render ${median(parts.render).toFixed(1)} ms)`);
    // A figure, printed: speed belongs in measurements, not in pass/fail (CI machines vary).
    // The Faster plans card is on the page all along (its search runs in its own worker after a
    // pause): it ends up with the plans of the last change.
    await page.waitForFunction(() => {
      const s = window.__stepcast;
      return s.search.for === s.latest && s.search.state === 'done';
    }, null, { timeout: 15000 });
    assert.equal(await page.locator('#search tbody tr').count(), 10, 'the card lists plans');
  });

  test('is readable at phone width and in dark mode', async () => {
    await openDefault();
    // The plan fieldset with the training software's flags open: plan-advanced(-phone)(-dark).png,
    // in a window tall enough for all of it (no inner scrolling, no bar over it).
    const plan = page.locator('fieldset:has(#plan-fields)');
    const shootPlan = async (name, width) => {
      await page.setViewportSize({ width, height: 2400 });
      await page.waitForTimeout(50);
      await plan.screenshot({ path: join(SHOTS, `${name}.png`) });
    };
    await page.click('details.advanced summary');
    await shootPlan('plan-advanced', DESKTOP.width);
    await shootPlan('plan-advanced-phone', PHONE.width);
    await page.setViewportSize(PHONE);
    await page.waitForTimeout(100);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `no sideways scrolling at phone width, Advanced open (overflow ${overflow}px)`);
    await page.click('details.advanced summary');
    await page.screenshot({ path: join(SHOTS, 'phone.png'), fullPage: true, timeout: 120000 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(100);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const lum = bg.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b, 0);
    assert.ok(lum < 120, `dark background in dark mode (${bg})`);
    await page.screenshot({ path: join(SHOTS, 'phone-dark.png'), fullPage: true, timeout: 120000 });
    await page.click('details.advanced summary');
    await shootPlan('plan-advanced-phone-dark', PHONE.width);
    await shootPlan('plan-advanced-dark', DESKTOP.width);
    await page.click('details.advanced summary');
    await page.setViewportSize(DESKTOP);
    await page.waitForTimeout(100);
    await shootDesktop('desktop-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  test('every control has a label, and tooltips explain terms', async () => {
    const unlabelled = await page.$$eval('#inputs input, #inputs select, #cost-form input', (els) => els
      .filter((el) => el.offsetParent !== null && !el.labels?.length && !el.getAttribute('aria-label'))
      .map((el) => el.id || el.name));
    assert.deepEqual(unlabelled, []);
    await page.focus('[data-metric="mfu"] .tip');
    const tipText = await page.textContent('#tooltip');
    assert.match(tipText, /MFU/);
    assert.match(tipText, /peak/);
    await page.keyboard.press('Escape');
    assert.equal(await page.isVisible('#tooltip'), false);
  });

  test('works offline after the first load (service worker)', async () => {
    await goOffline(page, site, context);
    await page.reload();
    await page.waitForSelector('[data-metric="iteration_time_s"]', { timeout: 20000 });
    await settle();
    await expectCliNumbers(withPlan(DEFAULT, { dp: undefined }));
    await setValue('#f-tp', 4);
    await expectCliNumbers(withPlan(DEFAULT, { dp: undefined, tp: 4 }));
    await context.setOffline(false);
  });

  test('logged no console errors', () => {
    assert.deepEqual(problems, []);
  });
});
