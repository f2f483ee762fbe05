// The user's task (issue 37, "Embedding as a docs site expects it"): the author of a documentation
// site built with Vite installs Stepcast from npm, imports the element and the engine as ES
// modules, themes the calculator with its custom properties and parts, and publishes the built
// site. Here: `npm pack` in web/, a temporary Vite site that installs the tarball (offline: the
// package has no dependencies; the Vite of web/node_modules builds it), served from its build
// folder alone (so every file the element needs must have been found and copied by the bundler),
// and checked in Chromium: both calculators estimate as the CLI does, the engine module's report
// is the CLI's, the theme applies, an unknown control and a missing page say so in the element,
// the packed custom-elements.json describes what the element really observes, renders and styles,
// and axe-core finds nothing in any state reached. The same package's engine module in Node:
// estimate() and search() answer as the CLI does, errors reject with the engine's message.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { CLI, ROOT, cliEstimate, cliEstimateLink, cliResolve, cliSearch, jsonDiff, messageOf, requireBuilt } from '../wasm/common.mjs';
import { launch } from './browser.mjs';
import { DESKTOP, calculatorSettled, watch } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');
requireBuilt(join(ROOT, 'build-wasm', 'wasm', 'stepcast.js'), 'build the WebAssembly modules (docs: web/README.md)');

const WEB = join(ROOT, 'web');
const AXE = createRequire(join(WEB, 'package.json')).resolve('axe-core/axe.min.js');
const THEMED = 'v=2&model=llama3-8b&node=dgx-h100&nodes=1&tp=2&gbs=128&seq=8192';
const BARE = 'v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096';
// The engine module's scenario on the docs page (and in Node below).
const SCENARIO = { model: 'llama3-8b', cluster: { node: 'dgx-h100', nodes: 2 }, plan: { tp: 2, pp: 2, global_batch: 64 } };
// The author's theme: a brown accent on a paper background, a serif font, square corners, and the
// results' numbers in purple through ::part(value). Each colour meets WCAG AA on the background.
const THEME = {
  accent: 'rgb(122, 59, 0)', background: 'rgb(251, 250, 247)', radius: '2px', value: 'rgb(91, 42, 134)', border: '2px',
};

let dir;
let site;
let server;
let browser;
let page;
const problems = [];

function run(command, args, cwd) {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
  assert.equal(r.status, 0, `${command} ${args.join(' ')}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'stepcast-docsite-'));
  run('npm', ['pack', '--pack-destination', dir], WEB);
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  site = join(dir, 'docs');
  mkdirSync(site);
  writeFileSync(join(site, 'package.json'), JSON.stringify({
    name: 'training-docs', private: true, type: 'module', dependencies: { 'stepcast-web': `file:../${tarball}` },
  }, null, 2));
  run('npm', ['install', '--offline', '--no-audit', '--no-fund'], site);
  writeFileSync(join(site, 'index.html'), `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Choosing a training plan · Our docs</title>
<link rel="stylesheet" href="./theme.css"><script type="module" src="./main.js"></script></head>
<body><main>
<h1>Choosing a training plan</h1>
<p>Llama 3 8B on one DGX H100, with the inputs our readers tune.</p>
<stepcast-calculator id="themed" scenario="${THEMED}" controls="tp,warp_speed,micro_batch" page="https://stepcast.example/"></stepcast-calculator>
<h2>Llama 3 70B</h2>
<stepcast-calculator id="bare" scenario="#${BARE}" controls="tp,pp" compact></stepcast-calculator>
<h2>From a script</h2>
<p>Iteration time of Llama 3 8B on two nodes: <output id="engine-time">…</output></p>
</main></body></html>
`);
  writeFileSync(join(site, 'main.js'), `import { StepcastCalculator } from 'stepcast-web/element';
import { estimate } from 'stepcast-web/engine';

window.__exported = customElements.get('stepcast-calculator') === StepcastCalculator;

document.addEventListener('stepcast-estimate', (e) => { (window.__estimates ??= {})[e.target.id] = e.detail; });
const scenario = ${JSON.stringify(SCENARIO)};
estimate(scenario).then((r) => {
  window.__report = r;
  document.querySelector('#engine-time').textContent = r.iteration_time_s.toFixed(2) + ' s';
});
estimate({ ...scenario, plan: { ...scenario.plan, tp: 3 } }).catch((e) => {
  window.__rejected = { name: e.name, message: e.message, code: e.code, path: e.path, isError: e instanceof Error };
});
`);
  // A colour set applies in both schemes: the site sets its dark ones under its own media query.
  writeFileSync(join(site, 'theme.css'), `body { font: 17px/1.6 Georgia, serif; margin: 0 auto; max-width: 46rem; padding: 1rem; }
#themed { --stepcast-accent: #7a3b00; --stepcast-background: #fbfaf7; --stepcast-radius: 2px; --stepcast-font-family: Georgia, serif; }
stepcast-calculator::part(value) { color: #5b2a86; }
#themed::part(calculator) { border-width: 2px; }
@media (prefers-color-scheme: dark) {
  body { background: #14110d; color: #eee; }
  #themed { --stepcast-accent: #f0b36b; --stepcast-background: #1c1813; }
  stepcast-calculator::part(value) { color: #d9b8ff; }
}
`);
  mkdirSync(join(site, 'public'));
  writeFileSync(join(site, 'public', 'favicon.ico'), ''); // the site's own; not the package's business
  const { build } = await import(pathToFileURL(join(WEB, 'node_modules', 'vite', 'dist', 'node', 'index.js')).href);
  await build({ root: site, configFile: false, logLevel: 'warn', base: './', build: { outDir: join(site, 'dist'), emptyOutDir: true } });
  const { serve } = await import(pathToFileURL(join(WEB, 'scripts', 'serve.mjs')).href);
  server = await serve(join(site, 'dist'), 0);
  browser = await launch();
  // axe is the test's script, not the site's: past the server's Content-Security-Policy.
  const context = await browser.newContext({ viewport: DESKTOP, bypassCSP: true });
  page = watch(await context.newPage(), problems);
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  await page.waitForFunction(() => window.__estimates?.themed && window.__estimates?.bare && window.__report, null, { timeout: 30000 });
});

after(async () => {
  await browser?.close();
  await new Promise((ok) => (server ? server.close(() => ok()) : ok()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function violations() {
  if (!(await page.evaluate(() => !!window.axe))) await page.addScriptTag({ path: AXE });
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  });
}

/** Computed styles inside calculator `id`'s shadow root: {selector: {property: value}}. */
const look = (id, wanted) => page.$eval(`#${id}`, (el, w) => Object.fromEntries(Object.entries(w).map(([sel, props]) => {
  const cs = getComputedStyle(el.shadowRoot.querySelector(sel));
  return [sel, Object.fromEntries(props.map((p) => [p, cs[p]]))];
})), wanted);

describe('a Vite documentation site with the packed npm package', () => {
  test('the bundler copied what the element and the engine locate by new URL(..., import.meta.url)', () => {
    const assets = readdirSync(join(site, 'dist', 'assets'));
    assert.equal(assets.filter((f) => f.endsWith('.wasm')).length, 2, `the engine's and the tools' .wasm: ${assets}`);
    assert.ok(assets.some((f) => /^worker-.*\.js$/.test(f)), `the worker: ${assets}`);
    assert.ok(!existsSync(join(site, 'dist', 'node_modules')), 'nothing served from node_modules');
  });

  test('both calculators estimate as the CLI does', async () => {
    for (const [id, link] of [['themed', THEMED], ['bare', BARE]]) {
      await calculatorSettled(page, `#${id}`);
      const cli = cliEstimateLink(`https://example.org/#${link}`);
      assert.equal(cli.status, 0, cli.stderr);
      const shown = await page.evaluate((i) => window.__estimates[i], id);
      assert.deepEqual(jsonDiff({ iteration_time_s: cli.report.iteration_time_s, tokens_per_s: cli.report.tokens_per_s, mfu: cli.report.mfu, fits: cli.report.fits },
        { iteration_time_s: shown.iteration_time_s, tokens_per_s: shown.tokens_per_s, mfu: shown.mfu, fits: shown.fits }), [], id);
    }
  });

  test('the engine module in the browser: the CLI\'s report, and an error rejects with the engine\'s message', async () => {
    const cli = cliEstimate(JSON.stringify(SCENARIO), { timeline: false });
    assert.equal(cli.status, 0, cli.stderr);
    const report = await page.evaluate(() => window.__report);
    assert.deepEqual(jsonDiff(cli.report, report), []);
    assert.equal(await page.textContent('#engine-time'), `${cli.report.iteration_time_s.toFixed(2)} s`);
    await page.waitForFunction(() => window.__rejected);
    const bad = cliEstimate(JSON.stringify({ ...SCENARIO, plan: { ...SCENARIO.plan, tp: 3 } }), { timeline: false });
    assert.notEqual(bad.status, 0);
    const rejected = await page.evaluate(() => window.__rejected);
    assert.deepEqual(rejected, { name: 'StepcastError', message: messageOf(bad.stderr.split('\n')[0]), code: 'invalid_plan',
      path: rejected.path, isError: true });
    assert.match(rejected.path, /^plan\./);
  });

  test('the theme applies: custom properties and parts', async () => {
    const themed = await look('themed', { '.sc': ['backgroundColor', 'borderTopLeftRadius', 'fontFamily', 'borderTopWidth'],
      '.sc-open': ['color'], '.sc-value': ['color'] });
    assert.deepEqual(themed, {
      '.sc': { backgroundColor: THEME.background, borderTopLeftRadius: THEME.radius, fontFamily: 'Georgia, serif', borderTopWidth: THEME.border },
      '.sc-open': { color: THEME.accent },
      '.sc-value': { color: THEME.value },
    });
    // The other calculator sets no property: the element's own defaults (surface.js), the parts
    // rule that names every calculator, and the document's own font stays outside.
    const bare = await look('bare', { '.sc': ['backgroundColor', 'borderTopLeftRadius', 'fontFamily', 'borderTopWidth'], '.sc-value': ['color'] });
    assert.deepEqual(bare['.sc'].backgroundColor, 'rgb(255, 255, 255)');
    assert.equal(bare['.sc'].borderTopLeftRadius, '10px');
    assert.equal(bare['.sc'].borderTopWidth, '1px');
    assert.match(bare['.sc'].fontFamily, /^system-ui/);
    assert.equal(bare['.sc-value'].color, THEME.value);
  });

  test('an unknown control and a missing page are said in the element', async () => {
    const controls = await page.$$eval('#themed [data-control]', (els) => els.map((e) => e.dataset.control));
    assert.deepEqual(controls, ['tp', 'micro_batch'], 'the known ones are shown');
    const notice = page.locator('#themed [data-notice="controls"]');
    assert.ok(await notice.isVisible());
    const text = await notice.textContent();
    assert.match(text, /^Unknown control “warp_speed” \(left out\)\. The controls attribute takes: model, node, nodes, gpus_per_node, seq_len, tokens, price, /);
    assert.match(text, /\btp, pp\b.*\bmicro_batch\b/);
    assert.match(await page.getAttribute('#themed .sc-open', 'href'), /^https:\/\/stepcast\.example\/#v=3&model=llama3-8b&/);
    // Without page=, "Open in Stepcast" has nowhere to go: the element asks for the attribute.
    assert.equal(await page.locator('#bare .sc-open').count(), 0);
    const missing = page.locator('#bare [data-notice="page"]');
    assert.ok(await missing.isVisible());
    assert.equal(await missing.textContent(), '“Open in Stepcast” needs the address of a Stepcast page: add page="https://…/" to this element.');
    assert.match(await page.$eval('#bare', (el) => el.link), /^#v=3&model=llama3-70b&/, 'el.link: the plan, as a fragment');
    assert.equal(await page.locator('#bare [data-notice="controls"]').count(), 0);
  });

  test('custom-elements.json describes what the element observes, renders and styles', async () => {
    const pkgDir = join(site, 'node_modules', 'stepcast-web');
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    assert.equal(pkg.private, undefined, 'publishable');
    assert.equal(pkg.customElements, 'custom-elements.json');
    const manifest = JSON.parse(readFileSync(join(pkgDir, pkg.customElements), 'utf8'));
    assert.equal(manifest.schemaVersion, '1.0.0');
    const [mod] = manifest.modules;
    assert.ok(existsSync(join(pkgDir, mod.path)), mod.path);
    assert.equal(pkg.exports['./element'].default, `./${mod.path}`);
    const [decl] = mod.declarations;
    assert.equal(decl.tagName, 'stepcast-calculator');
    assert.deepEqual(mod.exports.find((e) => e.kind === 'custom-element-definition'),
      { kind: 'custom-element-definition', name: 'stepcast-calculator', declaration: { name: decl.name, module: mod.path } });
    assert.equal(await page.evaluate(() => window.__exported), true, `the module exports ${decl.name}, the class defined`);
    assert.deepEqual(mod.exports.find((e) => e.kind === 'js'), { kind: 'js', name: decl.name, declaration: { name: decl.name, module: mod.path } });
    const real = await page.evaluate(() => {
      const Element = customElements.get('stepcast-calculator');
      const els = [...document.querySelectorAll('stepcast-calculator')];
      const css = els[0].shadowRoot.adoptedStyleSheets.flatMap((s) => [...s.cssRules].map((r) => r.cssText)).join('\n');
      return {
        observed: Element.observedAttributes,
        parts: [...new Set(els.flatMap((el) => [...el.shadowRoot.querySelectorAll('[part]')].flatMap((p) => p.getAttribute('part').split(' '))))].sort(),
        properties: [...new Set(css.match(/--stepcast-[\w-]+/g))].sort(),
        // (:host([hidden]) honours the global attribute: no attribute of the element's own.)
        hostAttributes: [...new Set([...css.matchAll(/:host\(\[(\w+)/g)].map((m) => m[1]))].filter((a) => a !== 'hidden').sort(),
        members: Object.fromEntries(['scenario', 'rendered', 'link'].map((k) => [k, els[0][k] !== undefined])),
      };
    });
    const attributes = decl.attributes.map((a) => a.name);
    // Every attribute is either observed (re-reads the calculator) or styles it (:host([...])), and
    // the manifest names every one of both.
    assert.deepEqual([...attributes].sort(), [...new Set([...real.observed, ...real.hostAttributes])].sort());
    assert.deepEqual(decl.cssParts.map((p) => p.name).sort(), real.parts, 'the parts rendered (both calculators, every notice)');
    assert.deepEqual(decl.cssProperties.map((p) => p.name).sort(), real.properties, 'the --stepcast-* properties the styles read');
    assert.deepEqual(decl.events.map((e) => e.name), ['stepcast-estimate']);
    assert.deepEqual(real.members, Object.fromEntries(decl.members.map((m) => [m.name, true])));
    // The declarations a TypeScript site reads name the same attributes.
    const types = readFileSync(join(pkgDir, pkg.types), 'utf8');
    const typed = /interface StepcastCalculatorAttributes \{([\s\S]*?)\n\}/.exec(types)[1];
    assert.deepEqual([...typed.matchAll(/^ {2}(\w+)\?:/gm)].map((m) => m[1]).sort(), [...attributes].sort());
    const element = /interface StepcastCalculatorElement extends HTMLElement \{([\s\S]*?)\n\}/.exec(types)[1];
    assert.deepEqual([...element.matchAll(/^ {2}readonly (\w+):/gm)].map((m) => m[1]), decl.members.map((m) => m.name));
  });

  test('axe-core: no violations, light and dark, with an invalid plan on show', async () => {
    assert.deepEqual(await violations(), [], 'light');
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.deepEqual(await violations(), [], 'dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await page.fill('#themed [data-control="tp"]', '3');
    await page.waitForFunction(() => document.querySelector('#themed').dataset.state === 'error');
    assert.deepEqual(await violations(), [], 'invalid plan');
    await page.fill('#themed [data-control="tp"]', '2');
    await calculatorSettled(page, '#themed');
    assert.equal(await page.$eval('#themed', (el) => el.dataset.state), 'ok');
  });

  test('no console errors, no dialogs', () => {
    assert.deepEqual(problems, []);
  });
});

describe('docs/embed.md', () => {
  test('its tables name the attributes, custom properties (with their defaults) and parts of surface.js', async () => {
    const surface = await import(pathToFileURL(join(WEB, 'src', 'embed', 'surface.js')).href);
    const doc = readFileSync(join(ROOT, 'docs', 'embed.md'), 'utf8');
    /** The rows of the table headed `| first |`: their cells, backticks dropped. */
    const table = (first) => {
      const at = doc.indexOf(`| ${first} |`);
      assert.ok(at >= 0, `a table headed ${first}`);
      const lines = doc.slice(at).split('\n').slice(2);
      return lines.slice(0, lines.findIndex((l) => !l.startsWith('|')))
        .map((l) => l.split('|').slice(1, -1).map((c) => c.trim().replace(/^`|`$/g, '')));
    };
    assert.deepEqual(table('attribute').map((r) => r[0]), surface.ATTRIBUTES.map((a) => a.name));
    assert.deepEqual(table('part').map((r) => r[0]), surface.PARTS.map((p) => p.name));
    const properties = table('custom property');
    assert.deepEqual(properties.map((r) => r[0]), surface.CSS_PROPERTIES.map((p) => p.name));
    for (const [name, light, dark] of properties) {
      const p = surface.CSS_PROPERTIES.find((x) => x.name === name);
      if (name === '--stepcast-font-family') continue; // abbreviated in the table
      assert.deepEqual([light, dark === 'the same' ? light : dark], [p.light, p.dark], name);
    }
  });
});

describe('the packed engine module in Node', () => {
  let engine;
  before(async () => {
    // As a Node script of the site resolves it: through the package's exports.
    const path = createRequire(join(site, 'package.json')).resolve('stepcast-web/engine');
    engine = await import(pathToFileURL(path).href);
  });

  test('estimate() is `stepcast estimate --format json`, fit_fixes included', async () => {
    const fits = JSON.stringify(SCENARIO);
    const oom = JSON.stringify({ model: 'llama3-8b', cluster: { node: 'dgx-h100', nodes: 1 }, seq_len: 8192,
      plan: { tp: 1, pp: 1, micro_batch: 2, global_batch: 64 } });
    for (const text of [fits, oom]) {
      const cli = cliEstimate(text, { timeline: false });
      assert.equal(cli.status, 0, cli.stderr);
      assert.deepEqual(jsonDiff(cli.report, await engine.estimate(JSON.parse(text))), []);
    }
    assert.equal((await engine.estimate(oom)).fits, false, 'JSON text as well as an object');
    assert.ok((await engine.estimate(oom)).fit_fixes.length > 0);
  });

  test('search() is `stepcast search --format json`', async () => {
    const cli = cliSearch(JSON.stringify(SCENARIO), 5);
    assert.equal(cli.status, 0, cli.stderr);
    assert.deepEqual(jsonDiff(cli.result, await engine.search(SCENARIO, { top: 5 })), []);
  });

  test('errors reject with the engine\'s message and error objects', async () => {
    await assert.rejects(engine.estimate('{not json'), (e) => e instanceof engine.StepcastError && e.code === 'parse_error' &&
      e.message === 'the scenario is not valid JSON');
    const bad = JSON.stringify({ ...SCENARIO, plan: { ...SCENARIO.plan, tp: 3 } });
    const cli = cliEstimate(bad, { timeline: false });
    assert.notEqual(cli.status, 0);
    await assert.rejects(engine.estimate(bad), (e) => e.name === 'StepcastError' && e.message === messageOf(cli.stderr.split('\n')[0]) &&
      e.errors.length === 1 && e.errors[0].code === 'invalid_plan');
    // resolve(): every problem at once, as `stepcast resolve --format json` lists them.
    const worse = JSON.stringify({ ...SCENARIO, plan: { tp: 3, pp: 0 } });
    const listed = cliResolve(worse);
    assert.equal(listed.problems.length, 2);
    await assert.rejects(engine.resolve(worse), (e) => assert.deepEqual(e.errors, listed.problems) ?? e.message === listed.errors.join('; '));
    await assert.rejects(engine.search(SCENARIO, { top: 0 }), (e) => e.code === 'out_of_range' && e.path === 'top');
  });
});
