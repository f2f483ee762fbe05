// The npm package (issue "the page, round 2", item 19): `npm pack` in web/ gives a tarball a
// documentation site installs; a plain static site made from it (the one script tag and the
// element, as web/README.md shows) estimates in Chromium with the CLI's numbers, and the package
// carries the TypeScript declarations of the element, its event and the engine's bindings. (A site
// that bundles the package with Vite, its theming and its engine module: docsite.test.mjs.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { CLI, ROOT, cliEstimateLink, requireBuilt } from '../wasm/common.mjs';
import { launch } from './browser.mjs';
import { watch } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');
requireBuilt(join(ROOT, 'build-wasm', 'wasm', 'stepcast.js'), 'build the WebAssembly modules (docs: web/README.md)');

const SCENARIO = 'v=2&model=llama3-8b&node=dgx-h100&nodes=1&tp=2&gbs=128&seq=8192';
let dir;
let server;
let browser;
const problems = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stepcast-pack-'));
  const packed = spawnSync('npm', ['pack', '--pack-destination', dir], { cwd: join(ROOT, 'web'), encoding: 'utf8' });
  assert.equal(packed.status, 0, packed.stderr);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote a tarball');
  // What `npm install ./stepcast-web-0.1.0.tgz` puts in node_modules.
  const site = join(dir, 'site');
  const pkg = join(site, 'node_modules', 'stepcast-web');
  mkdirSync(pkg, { recursive: true });
  const untar = spawnSync('tar', ['-xzf', join(dir, tarball), '-C', pkg, '--strip-components=1']);
  assert.equal(untar.status, 0, String(untar.stderr));
  writeFileSync(join(site, 'index.html'), `<!doctype html><html><head><meta charset="utf-8"><title>Docs</title>
<script src="node_modules/stepcast-web/dist/stepcast-embed.js"></script><script src="listen.js"></script></head>
<body><h1>Our training docs</h1>
<stepcast-calculator id="calc" scenario="${SCENARIO}" controls="tp,pp,micro_batch"></stepcast-calculator>
</body></html>\n`);
  writeFileSync(join(site, 'favicon.ico'), ''); // a plain site's own; not the package's business
  writeFileSync(join(site, 'listen.js'), `document.addEventListener('stepcast-estimate', (e) => { window.__estimate = e.detail; });\n`);
  const { serve } = await import(pathToFileURL(join(ROOT, 'web', 'scripts', 'serve.mjs')).href);
  server = await serve(site, 0);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await new Promise((ok) => (server ? server.close(() => ok()) : ok()));
  if (dir) rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(problems, []);
});

describe('the npm package', () => {
  test('a plain static site with the packed element estimates as the CLI does', async () => {
    const p = watch(await browser.newPage(), problems);
    await p.goto(`http://127.0.0.1:${server.address().port}/`);
    await p.waitForFunction(() => window.__estimate, null, { timeout: 30000 });
    const shown = await p.evaluate(() => window.__estimate);
    const cli = cliEstimateLink(`https://example.org/#${SCENARIO}`);
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(shown.iteration_time_s, cli.report.iteration_time_s);
    assert.equal(shown.tokens_per_s, cli.report.tokens_per_s);
    assert.equal(shown.fits, cli.report.fits);
    // The package has no page of its own: without page=, "Open in Stepcast" asks for one.
    assert.match(await p.textContent('#calc [data-notice="page"]'), /needs the address of a Stepcast page: add page=/);
    await p.close();
  });

  test('the package carries the element, its engine and the TypeScript declarations, and nothing else', () => {
    const pkg = join(dir, 'site', 'node_modules', 'stepcast-web');
    const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
    assert.equal(manifest.types, 'types/stepcast.d.ts');
    assert.equal(manifest.exports['./embed'], './dist/stepcast-embed.js');
    const types = readFileSync(join(pkg, manifest.types), 'utf8');
    assert.match(types, /'stepcast-calculator': StepcastCalculatorElement;/);
    assert.match(types, /'stepcast-estimate': CustomEvent<StepcastEstimateDetail>;/);
    for (const binding of ['estimate', 'resolve', 'schema', 'presets', 'toLink', 'fromLink', 'search', 'traffic'])
      assert.match(types, new RegExp(`\\n  ${binding}\\(`), `the ${binding} binding is declared`);
    const top = readdirSync(pkg).sort();
    assert.deepEqual(top, ['LICENSE', 'README.md', 'custom-elements.json', 'dist', 'package.json', 'types']);
    assert.deepEqual(readdirSync(join(pkg, 'dist')).sort(), ['assets', 'engine.js', 'stepcast-calculator.js', 'stepcast-embed.js']);
    // The element's and the engine's code, the worker, the two modules' glue and WebAssembly: no
    // page, no style sheet, no service worker.
    const assets = readdirSync(join(pkg, 'dist', 'assets')).map((f) => f.replace(/-[\w-]{8}\./, '.')).sort();
    assert.deepEqual(assets, ['stepcast-tools.js', 'stepcast-tools.wasm', 'stepcast.js', 'stepcast.wasm', 'worker.js']);
    assert.equal(readFileSync(join(pkg, 'LICENSE'), 'utf8'), readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
  });
});
