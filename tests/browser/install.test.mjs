// The page as an installed app (issue 37, "an installable app"), in Chromium: its web manifest
// makes it installable (Chromium's own check, from a profile on disk: an incognito one never is),
// and files dropped on the page go where a paste would (a config.json or a Megatron-LM script to
// Import, nccl-tests output to Calibrate to my cluster), with the same verdict; a file too large
// to be any of them is refused before it is read, and two at once are refused too. Its PNG icons
// (192 and 512 px, and a maskable 512) are favicon.svg as Chromium draws it (web/scripts/icons.mjs).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ROOT, SITE } from '../wasm/common.mjs';
import { maskableSvg, pixels, svgUrl } from '../../web/scripts/icons.mjs';
import { launch, launchProfile, serveSite } from './browser.mjs';
import { pageScenario, settle, openPage, suite } from './helpers.mjs';

const fx = suite({ serviceWorkers: 'allow' });
const DEFAULT = 'v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096';

/** Drops files [{name, text}] (or, as `bytes`, a file of that many zeros) on the page's body. */
async function drop(p, files) {
  await p.evaluate((list) => {
    const dt = new DataTransfer();
    for (const f of list) dt.items.add(new File([f.bytes ? new Uint8Array(f.bytes) : f.text], f.name));
    const at = { dataTransfer: dt, bubbles: true, cancelable: true };
    document.body.dispatchEvent(new DragEvent('dragover', at));
    document.body.dispatchEvent(new DragEvent('drop', at));
  }, files);
}

describe('an installable app', () => {
  test('the manifest: name, start address, standalone, an icon; Chromium finds nothing against installing it', async () => {
    const manifest = JSON.parse(readFileSync(join(SITE, 'manifest.webmanifest'), 'utf8'));
    assert.equal(manifest.short_name, 'Stepcast');
    assert.equal(manifest.start_url, './');
    assert.equal(manifest.display, 'standalone');
    for (const icon of manifest.icons) assert.ok(readFileSync(join(SITE, icon.src)).length > 0, icon.src);
    const site = await serveSite();
    const dir = mkdtempSync(join(tmpdir(), 'stepcast-profile-'));
    const context = await launchProfile(dir);
    try {
      const p = await context.newPage();
      await p.goto(site.url);
      await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
      await p.evaluate(() => navigator.serviceWorker.ready.then(() => true));
      const cdp = await context.newCDPSession(p);
      assert.deepEqual((await cdp.send('Page.getInstallabilityErrors')).installabilityErrors, []);
      const { url, errors } = await cdp.send('Page.getAppManifest');
      assert.equal(new URL(url).pathname, '/manifest.webmanifest');
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
      await site.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the PNG icons: 192 and 512 px and a maskable 512, each favicon.svg as Chromium draws it', async () => {
    const manifest = JSON.parse(readFileSync(join(SITE, 'manifest.webmanifest'), 'utf8'));
    const pngs = manifest.icons.filter((i) => i.type === 'image/png');
    assert.deepEqual(pngs.map((i) => `${i.sizes} ${i.purpose}`), ['192x192 any', '512x512 any', '512x512 maskable']);
    const svg = readFileSync(join(SITE, 'favicon.svg'), 'utf8');
    const browser = await launch();
    try {
      const p = await browser.newPage();
      for (const icon of pngs) {
        const file = readFileSync(join(SITE, icon.src));
        const size = Number(icon.sizes.split('x')[0]);
        // The PNG header's width and height (IHDR, bytes 16-23) are the manifest's.
        assert.equal(file.subarray(1, 4).toString('latin1'), 'PNG', icon.src);
        assert.deepEqual([file.readUInt32BE(16), file.readUInt32BE(20)], [size, size], icon.src);
        assert.ok(file.length < 10_000, `${icon.src}: ${file.length} bytes`);
        const maskable = icon.purpose === 'maskable';
        const [got, want] = [await pixels(p, `data:image/png;base64,${file.toString('base64')}`, size),
          await pixels(p, svgUrl(maskable ? maskableSvg(svg) : svg), size)];
        let worst = 0;
        for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
        assert.ok(worst <= 2, `${icon.src}: the SVG drawn again differs by ${worst} in a channel`);
        // The rounded icon's corner is transparent; the maskable one is opaque to its edges and
        // draws nothing but its background outside the middle 80 % (the safe circle, radius 0.4).
        const at = (x, y) => [...got.subarray(4 * (y * size + x), 4 * (y * size + x) + 4)];
        const blue = [0x1d, 0x4e, 0xd8, 255];
        assert.equal(at(0, 0)[3], maskable ? 255 : 0, `${icon.src}: its corner`);
        if (maskable) {
          for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) {
            if (Math.hypot(x + 0.5 - size / 2, y + 0.5 - size / 2) > 0.4 * size)
              assert.deepEqual(at(x, y), blue, `${icon.src}: (${x}, ${y}) is outside the safe circle`);
          }
        }
        assert.deepEqual(at(size / 2, size / 2), [255, 255, 255, 255], `${icon.src}: the white bar in the middle`);
      }
    } finally {
      await browser.close();
    }
  });

  test('a dropped config.json becomes the custom model, as pasted', async () => {
    const p = await openPage(fx, `${fx.site.url}#${DEFAULT}`);
    const text = readFileSync(join(ROOT, 'tests', 'fixtures', 'hf-config', 'meta-llama-3-8b.json'), 'utf8');
    await drop(p, [{ name: 'config.json', text }]);
    await p.waitForFunction(() => /^Imported/.test(document.querySelector('#import-status').textContent));
    await settle(p);
    assert.equal(await p.inputValue('#import-text'), text);
    const s = await pageScenario(p);
    assert.equal(s.model.hidden, 4096);
    assert.equal(s.model.layers, 32);
    await p.close();
  });

  test('a dropped Megatron-LM launch script sets the model and the plan', async () => {
    const p = await openPage(fx, `${fx.site.url}#${DEFAULT}`);
    const text = readFileSync(join(ROOT, 'tests', 'fixtures', 'megatron-args', 'llama3-8b-torchrun.sh'), 'utf8');
    await drop(p, [{ name: 'run.sh', text }]);
    await p.waitForFunction(() => /^Imported the model and the plan/.test(document.querySelector('#import-status').textContent));
    await settle(p);
    const tp = /--tensor-model-parallel-size[ =](\d+)/.exec(text);
    assert.ok(tp, 'the fixture sets TP');
    assert.equal((await pageScenario(p)).plan.tp, Number(tp[1]));
    // Its torchrun prefix gives the node count; the page says the node is assumed, in its words.
    const said = await p.textContent('#import-status');
    assert.match(said, /^Imported the model and the plan and the cluster from the launch line: 2 nodes, as torchrun starts them; the node itself is assumed \(choose the one the job runs on under Cluster\)\./);
    assert.doesNotMatch(said, /--node|cluster:/);
    assert.equal((await pageScenario(p)).cluster.nodes, 2);
    await p.close();
  });

  test('a dropped torchtitan job config sets the model and the plan', async () => {
    const p = await openPage(fx, `${fx.site.url}#${DEFAULT}`);
    const text = readFileSync(join(ROOT, 'tests', 'fixtures', 'torchtitan', 'llama3_70b.toml'), 'utf8');
    await drop(p, [{ name: 'llama3_70b.toml', text }]);
    await p.waitForFunction(() => /^Imported the model and the plan of the torchtitan job config/.test(document.querySelector('#import-status').textContent));
    await settle(p);
    const s = await pageScenario(p);
    assert.deepEqual([s.model, s.plan.framework, s.plan.tp, s.plan.micro_batch, s.seq_len], ['llama3-70b', 'torchtitan', 8, 8, 8192]);
    await p.close();
  });

  test('dropped nccl-tests output fits the link, as pasted', async () => {
    const p = await openPage(fx, `${fx.site.url}#${DEFAULT}`);
    const text = readFileSync(join(ROOT, 'tests', 'engine', 'fixtures', 'nccl-tests', 'all_reduce_perf-dgx-h100-8gpu.txt'), 'utf8');
    await drop(p, [{ name: 'all_reduce_perf.txt', text }]);
    await p.waitForFunction(() => /^Fitted the link inside a node/.test(document.querySelector('#cal-status').textContent));
    await settle(p);
    assert.equal(await p.inputValue('#cal-nccl'), text);
    assert.ok((await pageScenario(p)).calibration.intra_node_link.busbw_GBps > 0);
    await p.close();
  });

  test('a file too large to be any of them is refused unread; two files at once are refused', async () => {
    const p = await openPage(fx, `${fx.site.url}#${DEFAULT}`);
    const before = await pageScenario(p);
    await drop(p, [{ name: 'checkpoint.bin', bytes: 3 * 2 ** 20 }]);
    await p.waitForSelector('#drop-status:not([hidden])');
    assert.equal(await p.textContent('#drop-status'), 'checkpoint.bin is 3.0 MiB: a config.json, a launch script, ' +
      'nccl-tests output or a GEMM table is far smaller; nothing was read.');
    assert.equal(await p.inputValue('#import-text'), '');
    await drop(p, [{ name: 'a.json', text: '{}' }, { name: 'b.json', text: '{}' }]);
    assert.equal(await p.textContent('#drop-status'), 'Drop one file at a time (2 dropped).');
    assert.deepEqual(await pageScenario(p), before, 'the plan on show is untouched');
    await p.close();
  });
});
