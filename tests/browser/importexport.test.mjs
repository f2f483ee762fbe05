// Import and export on the page, in Chromium: the plan leaves as the CLI's `stepcast export` text
// (Megatron-LM arguments, Megatron-Bridge recipe, torchrun, torchtitan job config), copied or
// downloaded; pasted back in, the Megatron-LM arguments give the same plan and estimate; a
// torchtitan job config opens what `stepcast import torchtitan` gives on the node on show; a
// published config.json becomes the custom model with the preset's numbers; text the importers
// cannot read is refused beside the box.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { CLI, ROOT, cliEstimate, requireBuilt } from '../wasm/common.mjs';
import { assertNumbers, linked, metrics, openAnswered, pageScenario, settle, openPage, suite, watch } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block', acceptDownloads: true });
const DEFAULT = 'v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096';

function cli(args, input) {
  const r = spawnSync(CLI, [...args, '-'], { input, encoding: 'utf8' });
  if (r.error) throw r.error;
  return r;
}

const open = () => openPage(fx, `${fx.site.url}#${DEFAULT}`);

/**
 * Pastes `text`, imports it and waits for the box's verdict, then for the estimate of what it
 * opened. The box shows "Reading the pasted text…" (class busy) meanwhile: waiting only for it to
 * be on show would pass at once, before the import opened anything.
 */
async function importText(p, text) {
  await p.fill('#import-text', text);
  await p.click('#import-go');
  await p.waitForSelector('#import-status:not([hidden]):not(.busy)');
  await settle(p);
}

describe('import and export', () => {
  test('export: the CLI\'s text for each kind; the Megatron-LM arguments imported back give the same plan', async () => {
    const p = await open();
    const scenario = await pageScenario(p);
    for (const kind of ['megatron-args', 'bridge-recipe', 'torchrun', 'torchtitan']) {
      await p.click(`[data-export="${kind}"]`);
      await p.waitForFunction((k) => document.querySelector('#export-text').dataset.kind === k, kind);
      const want = cli(['export', kind], JSON.stringify(scenario));
      assert.equal(want.status, 0, want.stderr);
      assert.equal(await p.textContent('#export-text'), want.stdout, kind);
    }
    await p.click('[data-export="megatron-args"]');
    await p.waitForFunction(() => document.querySelector('#export-text').dataset.kind === 'megatron-args');
    const args = await p.textContent('#export-text');
    assert.match(args, /--tensor-model-parallel-size 8/);
    const [d] = await Promise.all([p.waitForEvent('download'), p.click('#download-export')]);
    assert.equal(d.suggestedFilename(), 'megatron-args.sh');
    assert.equal(readFileSync(await d.path(), 'utf8'), args);

    // Change the plan, then paste the exported arguments: the plan comes back, the cluster stays.
    await p.fill('#f-tp', '4');
    await settle(p);
    await importText(p, args);
    // The cluster on show, said once: not the command line's advice to add one before estimating.
    const said = await p.textContent('#import-status');
    assert.match(said, /^Imported the model and the plan; the cluster is the one that was on show\./);
    assert.doesNotMatch(said, /cluster:|--node|null/);
    const back = await pageScenario(p);
    for (const k of Object.keys(scenario.plan)) assert.deepEqual(back.plan[k], scenario.plan[k], k);
    assert.equal(back.plan.tp, 8);
    assert.deepEqual(back.cluster, scenario.cluster, 'the cluster on show');
    const cli8 = cliEstimate(JSON.stringify(back), { timeline: false });
    assert.equal(cli8.status, 0, cli8.stderr);
    assertNumbers(cli8.report, await metrics(p));
    const original = cliEstimate(JSON.stringify(scenario), { timeline: false }).report;
    assert.ok(Math.abs(cli8.report.iteration_time_s / original.iteration_time_s - 1) < 1e-9,
      'the same estimate as the plan exported (the model as a custom object with the preset\'s numbers)');
    await p.close();
  });

  test('a torchtitan job config: the CLI\'s scenario on the node on show; bad TOML refused beside the box', async () => {
    const p = await open();
    const toml = readFileSync(join(ROOT, 'tests', 'fixtures', 'torchtitan', 'llama3_70b.toml'), 'utf8');
    // Its shard degree is -1 (the ranks TP 8 leaves): the 8 DGX H100 on show say how many.
    await importText(p, toml);
    const want = cli(['import', 'torchtitan', '--node', 'dgx-h100', '--nodes', '8', '--format', 'json'], toml);
    assert.equal(want.status, 0, want.stderr);
    const imported = JSON.parse(want.stdout);
    // (The form leaves a DP the engine derives to the engine: 8 here.)
    const { dp, ...plan } = imported.scenario.plan;
    assert.equal(dp, 8);
    const shown = { ...imported.scenario, plan };
    assert.deepEqual(await pageScenario(p), shown);
    const status = await p.textContent('#import-status');
    assert.match(status, /^Imported the model and the plan of the torchtitan job config, on 8 dgx-h100 nodes\./);
    assert.ok(status.includes('Not modelled, so not imported: job.description'), status);
    const est = cliEstimate(JSON.stringify(imported.scenario), { timeline: false });
    assert.equal(est.status, 0, est.stderr);
    assertNumbers(est.report, await metrics(p));
    // Its export is the CLI's, and downloads as torchtitan.toml.
    await p.click('[data-export="torchtitan"]');
    await p.waitForFunction(() => document.querySelector('#export-text').dataset.kind === 'torchtitan');
    const [d] = await Promise.all([p.waitForEvent('download'), p.click('#download-export')]);
    assert.equal(d.suggestedFilename(), 'torchtitan.toml');
    assert.equal(readFileSync(await d.path(), 'utf8'), cli(['export', 'torchtitan'], JSON.stringify(imported.scenario)).stdout);
    // A table left open: the CLI's error, beside the box; the plan on show stays.
    await p.fill('#import-text', '[parallelism\ntensor_parallel_degree = 8');
    await p.click('#import-go');
    await p.waitForSelector('#import-status.error');
    const refused = cli(['import', 'torchtitan', '--nodes', '8'], '[parallelism\ntensor_parallel_degree = 8');
    assert.equal(refused.status, 2);
    assert.equal(await p.textContent('#import-status'),
      `Not a torchtitan job config this page can read: ${refused.stderr.trim().replace(/^error: /, '')}`);
    assert.deepEqual(await pageScenario(p), shown);
    await p.close();
  });

  test('fetch by Hugging Face id: the hub\'s config.json imported as pasted; gated, missing, offline and not-an-id said beside the box', async () => {
    // The browser logs each refused request itself ("Failed to load resource"): this page's
    // problems are kept apart, and only those three are expected.
    const own = [];
    const p = watch(await fx.context.newPage(), own);
    await p.goto(`${fx.site.url}#${DEFAULT}`);
    await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
    await settle(p);
    const config = readFileSync(join(ROOT, 'tests', 'fixtures', 'hf-config', 'meta-llama-3-8b.json'), 'utf8');
    const asked = [];
    // The hub, routed to fixtures: the page's one request off its origin, allowed by its policy.
    await p.route('https://huggingface.co/**', (route) => {
      const url = route.request().url();
      asked.push(url);
      if (url.includes('/meta-llama/Meta-Llama-3-8B/')) return route.fulfill({ status: 200, contentType: 'application/json', body: config });
      if (url.includes('/gated/')) return route.fulfill({ status: 403, body: 'Access to model is restricted' });
      if (url.includes('/offline/')) return route.abort('internetdisconnected');
      return route.fulfill({ status: 404, body: 'Entry not found' });
    });
    const fetchId = async (id) => {
      await p.fill('#hf-id', id);
      await p.click('#hf-fetch');
      await p.waitForSelector('#import-status:not([hidden]):not(.busy)');
      return p.textContent('#import-status');
    };
    assert.match(await fetchId('meta-llama/Meta-Llama-3-8B'), /^Imported LlamaForCausalLM as a custom model/);
    await settle(p);
    assert.deepEqual(asked, ['https://huggingface.co/meta-llama/Meta-Llama-3-8B/resolve/main/config.json']);
    assert.equal((await pageScenario(p)).model.hidden, 4096);
    assert.equal(await p.inputValue('#import-text'), config, 'the fetched text in the paste box');
    assert.equal(await fetchId('gated/Model-1'), 'gated/Model-1 is gated on huggingface.co: accept its license there, download its config.json and paste or drop it here.');
    assert.equal(await fetchId('nobody/nothing'), 'huggingface.co has no model nobody/nothing (or it has no config.json).');
    assert.equal(await fetchId('offline/Model'), 'huggingface.co could not be reached (offline?): download offline/Model\'s config.json and paste or drop it here.');
    const before = asked.length;
    assert.equal(await fetchId('../etc/passwd'), '“../etc/passwd” is not a Hugging Face model id: owner/name, as meta-llama/Llama-3.1-8B.');
    assert.equal(asked.length, before, 'no request for text that is not an id');
    assert.deepEqual(own, ['console: Failed to load resource: the server responded with a status of 403 (Forbidden)',
      'console: Failed to load resource: the server responded with a status of 404 (Not Found)',
      'console: Failed to load resource: net::ERR_INTERNET_DISCONNECTED']);
    await p.close();
  });

  test('a published config.json becomes the custom model; bad text is refused beside the box', async () => {
    const p = await open();
    const config = readFileSync(join(ROOT, 'tests', 'fixtures', 'hf-config', 'meta-llama-3-8b.json'), 'utf8');
    await importText(p, config);
    assert.match(await p.textContent('#import-status'), /^Imported LlamaForCausalLM as a custom model; the cluster and the plan are as they were\./,
      'the architecture, once (not "Imported imported")');
    // What the engine cannot model of a config is said with it (Qwen3's QK-Norm).
    const qwen3 = readFileSync(join(ROOT, 'tests', 'fixtures', 'hf-config', 'qwen3-8b.json'), 'utf8');
    await importText(p, qwen3);
    assert.equal(JSON.parse(cli(['import', 'hf-config'], qwen3).stdout).notes, 'QK-Norm is not modelled.');
    assert.match(await p.textContent('#import-status'), /^Imported Qwen3ForCausalLM as a custom model; the cluster and the plan are as they were\. QK-Norm is not modelled\./);
    await importText(p, config);
    const s = await pageScenario(p);
    const model = JSON.parse(cli(['import', 'hf-config'], config).stdout);
    assert.deepEqual(s.model, model);
    assert.equal(await p.isChecked('#f-model-mode-custom'), true);
    const cli8 = cliEstimate(JSON.stringify(s), { timeline: false });
    assertNumbers(cli8.report, await metrics(p));
    for (const [text, what] of [['{"architectures": ["BertForMaskedLM"]}', /^Not a config\.json this page can read: /],
      ['--num-layers four', /^Not a command line this page can read: /], ['   ', /^Paste a Hugging Face config\.json/]]) {
      await p.fill('#import-text', text);
      await p.click('#import-go');
      await p.waitForFunction(() => document.querySelector('#import-status').classList.contains('error'));
      assert.match(await p.textContent('#import-status'), what);
      assert.equal(await p.getAttribute('#import-status', 'role'), 'alert');
    }
    assert.deepEqual((await pageScenario(p)).model, model, 'a refused import changes nothing');
    await p.close();
  });
  test('a config whose context is long says it trains at it, and offers 4,096 tokens', async () => {
    // No sequence length in the plan on show: Qwen3-30B-A3B's config.json serves 40,960 tokens.
    const p = await openPage(fx, `${fx.site.url}#v=2&model=llama3-8b&node=dgx-h100&nodes=2&tp=2&gbs=64`);
    assert.equal((await pageScenario(p)).seq_len, undefined);
    await importText(p, readFileSync(join(ROOT, 'tests', 'fixtures', 'hf-config', 'qwen3-30b-a3b.json'), 'utf8'));
    assert.match(await p.textContent('#import-status'), /trains at the config's context, 40,960 tokens\. Train at 4,096 tokens$/);
    await p.click('#import-status button');
    await p.waitForFunction(() => /trained at 4,096 tokens/.test(document.querySelector('#import-status').textContent));
    await settle(p);
    const s = await pageScenario(p);
    assert.equal(s.seq_len, 4096);
    assert.equal(s.model.seq_len, 40960, 'the model stays as its config says');
    assertNumbers(cliEstimate(JSON.stringify(s), { timeline: false }).report, await metrics(p));
    await p.close();
  });

  // Issue 37 item 1: an imported model travels in the link. The page had Copy link disabled and
  // the fragment cleared; a reload lost the model. Now the link carries its shape (MoE here;
  // MLA and windows: ImportHfConfig.EveryImportedModelTravelsInALink), the page says it leaves out the model's source, and a fresh page opened with it shows
  // the same model and the same numbers.
  test('an imported config.json: Copy link, then the link in a fresh page gives the same model and numbers', async () => {
    const p = await open();
    // Mixtral 8x7B: a MoE model the page's plan (TP 8, PP 4 on 8 DGX H100) runs as it is.
    const config = readFileSync(join(ROOT, 'tests', 'fixtures', 'hf-config', 'mixtral-8x7b-v0.1.json'), 'utf8');
    await importText(p, config);
    const s = await pageScenario(p);
    assert.ok(s.model.moe, 'a MoE model');
    const link = await linked(p);
    assert.match(link, /#v=3&model=custom&.*&end$/);
    assert.equal(await p.isDisabled('#copy-link'), false, 'Copy link works for an imported model');
    await fx.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: fx.site.url.replace(/\/$/, '') });
    await p.click('#copy-link');
    assert.equal(await p.evaluate(() => navigator.clipboard.readText()), link, 'Copy link copies it');
    assert.match(await p.textContent('#link-left-out'), /The link leaves out the model's source: text for people, which the numbers do not depend on\./);
    const numbers = await metrics(p);
    const q = await openPage(fx, link);
    const t = await pageScenario(q);
    const { source, notes, ...shape } = s.model;
    assert.deepEqual(t.model, shape, 'the same model, less its source');
    assert.equal(await q.isChecked('#f-model-mode-custom'), true);
    assert.deepEqual(await metrics(q), numbers, 'the same numbers');
    // A reload keeps it; Back returns to the plan before the import, Forward to the import.
    await q.reload();
    await q.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
    await settle(q);
    assert.deepEqual((await pageScenario(q)).model, shape, 'reloaded: the same model');
    assert.deepEqual(await metrics(q), numbers, 'reloaded: the same numbers');
    await q.close();
    await p.goBack();
    await p.waitForFunction(() => document.querySelector('#f-model-mode-custom')?.checked === false, null, { timeout: 15000 });
    await settle(p);
    assert.equal((await pageScenario(p)).model, 'llama3-70b', 'Back: the plan before the import');
    await p.goForward();
    await p.waitForFunction(() => document.querySelector('#f-model-mode-custom')?.checked === true, null, { timeout: 15000 });
    await settle(p);
    assert.deepEqual((await pageScenario(p)).model, shape, 'Forward: the imported model, from its link');
    assert.deepEqual(await metrics(p), numbers, 'Forward: the same numbers');
    await p.close();
  });

  test('every config.json of tests/fixtures/hf-config: imported, its link opens the same model in a fresh page', async () => {
    // The issue met each of them refused by the link codec (dimensions, MoE, MLA, sliding windows).
    // The default plan (TP 8 × PP 4) does not run every one of them (DeepSeek-V3's 61 layers on
    // PP 4): the link still carries the model, and the numbers where there are some.
    const dir = join(ROOT, 'tests', 'fixtures', 'hf-config');
    const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
    assert.ok(files.length >= 10, files.join(', '));
    const p = await open();
    for (const file of files) {
      await importText(p, readFileSync(join(dir, file), 'utf8'));
      assert.match(await p.textContent('#import-status'), /^Imported/, file);
      const { source, notes, ...shape } = (await pageScenario(p)).model;
      const link = await linked(p);
      assert.match(link, /#v=3&model=custom&.*&end$/, file);
      const valid = await p.evaluate(() => !!window.__stepcast.resolved);
      const q = await openAnswered(fx, link);
      assert.deepEqual((await pageScenario(q)).model, shape, `${file}: the same model, less its source`);
      if (valid) assert.deepEqual(await metrics(q), await metrics(p), `${file}: the same numbers`);
      await q.close();
    }
    await p.close();
  });
});
