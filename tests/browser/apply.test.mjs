// Apply sets what the search varied and nothing else (issue 37 item 2), in Chromium: a user
// applies the fastest plan for a mixture of experts, then switches it to FP8; the memory the page
// shows is the CLI's for the same plan typed fresh (the training software's flags, FP8 parameter
// gather among them, still the profile's), and no flag the search keeps was written into the plan.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { CLI, SCENARIO_DIR, cliEstimate, cliRun, requireBuilt } from '../wasm/common.mjs';
import { pageScenario, searchShown, settle, suite, watch } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

// [what, its link (stepcast link of the scenario), the scenario]
const QWEN = JSON.parse(readFileSync(join(SCENARIO_DIR, 'qwen3-30b-a3b_dgx-b200x1_ep8.json'), 'utf8'));
const PLANS = [
  ['Qwen3-30B-A3B on one DGX B200 (the example)', 'v=2&model=qwen3-30b-a3b&node=dgx-b200&nodes=1&ep=8&gbs=256&sp=0&rc=selective&do=1&seq=4096',
    { ...QWEN, name: undefined }],
  ['DeepSeek-V3 on 256 H100', 'v=2&model=deepseek-v3&node=dgx-h100&nodes=32&tp=4&pp=16&ep=8&etp=1&gbs=1024&rc=full&fsl=1&lsl=4',
    { model: 'deepseek-v3', cluster: { node: 'dgx-h100', nodes: 32 },
      plan: { tp: 4, pp: 16, ep: 8, etp: 1, global_batch: 1024, first_stage_layers: 1, last_stage_layers: 4, recompute: 'full' } }],
];
const fx = suite({ serviceWorkers: 'block' });

/** The plan keys the engine's search varies (its schema) and the layer split it picks. */
function searched() {
  const r = cliRun(['schema', '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  return [...Object.keys(JSON.parse(r.stdout).search.varies).map((p) => p.replace(/^plan\./, '')),
    'embedding_in_split', 'loss_in_split', 'first_stage_layers', 'last_stage_layers'].filter((k) => k !== 'dp');
}

/** Each stage's memory as the page shows it: [{stage, total, fits}]. */
const memoryShown = (p) => p.$$eval('#memory .mem-row', (rows) => rows.map((r) => ({
  stage: Number(r.dataset.stage), total: Number(r.dataset.total), fits: r.dataset.fits === 'true' })));

for (const [what, fragment, scenario] of PLANS) test(`Apply on ${what}, then FP8: the memory verdict is the same plan typed fresh`, async () => {
  const p = watch(await fx.context.newPage(), fx.problems);
  await p.goto(`${fx.site.url}#${fragment}`);
  await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
  await searchShown(p);
  const before = await pageScenario(p);
  const row = p.locator('#search tbody tr:has(.apply)').first();
  const candidate = JSON.parse(await row.getAttribute('data-plan'));
  await row.locator('.apply').click();
  await searchShown(p);
  const applied = await pageScenario(p);

  // Only what the search varies differs from the plan before Apply (DP: derived again).
  const varied = searched();
  const changed = Object.keys({ ...before.plan, ...applied.plan })
    .filter((k) => JSON.stringify(before.plan[k]) !== JSON.stringify(applied.plan[k]));
  assert.ok(changed.length > 0, 'Apply changed the plan');
  assert.deepEqual(changed.filter((k) => !varied.includes(k) && k !== 'dp'), [], `only varied keys written (changed: ${changed})`);

  await p.selectOption('#f-precision', 'fp8');
  await settle(p);
  const fresh = structuredClone(scenario);
  for (const k of ['first_stage_layers', 'last_stage_layers']) delete fresh.plan[k]; // the search's split, below
  // Every key the search varied (overlap flags too: their buffers count in memory), as typed.
  for (const k of new Set([...varied, 'tp', 'pp', 'vpp', 'cp', 'ep', 'etp', 'micro_batch', 'recompute',
    'moe_dispatcher', 'embedding_in_split', 'loss_in_split', 'first_stage_layers', 'last_stage_layers'])) {
    if (k === 'dp') continue;
    if (candidate[k] !== undefined && candidate[k] !== null) fresh.plan[k] = candidate[k];
  }
  delete fresh.plan.dp;
  fresh.plan.precision = 'fp8';
  const cli = cliEstimate(JSON.stringify(fresh), { timeline: false });
  assert.equal(cli.status, 0, cli.stderr);
  const want = cli.report.stages.map((s) => ({ stage: s.index, total: s.memory_bytes.total, fits: s.fits }));
  const shown = await memoryShown(p);
  console.log(`applied ${JSON.stringify(Object.fromEntries(changed.map((k) => [k, applied.plan[k] ?? null])))}; ` +
    `FP8: fullest stage ${(Math.max(...shown.map((s) => s.total)) / 2 ** 30).toFixed(2)} GiB on the page, ` +
    `${(Math.max(...want.map((s) => s.total)) / 2 ** 30).toFixed(2)} GiB typed fresh`);
  for (const s of shown) {
    const w = want.find((x) => x.stage === s.stage);
    assert.ok(Math.abs(s.total - w.total) <= 1e-9 * w.total, `stage ${s.stage}: ${s.total} B on the page, ${w.total} B typed fresh`);
    assert.equal(s.fits, w.fits, `stage ${s.stage}: the verdict`);
  }
  await p.close();
});
