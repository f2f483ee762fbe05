// Every documented embed, in Chromium: the <stepcast-calculator> snippets of README.md,
// web/README.md and docs/embed.md, the iframe examples of web/README.md and docs/embed.md, and the
// calculators, iframe and code snippet of the example documentation page (web/examples/index.html). The snippets are read from those
// files, so a snippet that drifts from what the page estimates fails here. Each is served as a
// page of its own (same origin as the bundle, as the README asks), and must show what the full
// page shows for the same link: the iteration time, the memory of the fullest stage and whether it
// fits (a calculator that says "out of memory" for a plan the page shows fitting is a bug).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { ROOT, jsonDiff } from '../wasm/common.mjs';
import { launch, serveSite } from './browser.mjs';
import { DESKTOP, calculatorSettled, calculatorShows, settle, watch } from './helpers.mjs';

const decode = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&');

/**
 * The embeds of a document's text: [{where, kind: 'calculator' | 'iframe', html}]. An element with
 * attributes is a snippet; the bare tag (`<stepcast-calculator>` in a sentence) is not.
 */
function embedsIn(where, text) {
  const out = [];
  for (const m of text.matchAll(/<stepcast-calculator\s[\s\S]*?<\/stepcast-calculator>/g)) out.push({ where, kind: 'calculator', html: m[0] });
  for (const m of text.matchAll(/<iframe\s[\s\S]*?<\/iframe>/g)) out.push({ where, kind: 'iframe', html: m[0] });
  return out;
}

const read = (path) => readFileSync(join(ROOT, path), 'utf8');
const examplesPage = read('web/examples/index.html');
const SNIPPETS = [
  ...embedsIn('README.md', read('README.md')),
  ...embedsIn('web/README.md', read('web/README.md')),
  ...embedsIn('docs/embed.md', read('docs/embed.md')),
  // The example page's own elements (HTML: attributes with entities), and the snippet it shows as code.
  ...embedsIn('web/examples/index.html', examplesPage.replace(/<pre>[\s\S]*?<\/pre>/g, ''))
    .map((e) => ({ ...e, html: decode(e.html), base: 'examples/' })),
  ...[...examplesPage.matchAll(/<pre><code>([\s\S]*?)<\/code><\/pre>/g)]
    .flatMap((m) => embedsIn('web/examples/index.html (code)', decode(m[1]))),
];

let site;
let browser;
let context;
const problems = [];

before(async () => {
  site = await serveSite();
  browser = await launch();
  // No service worker: it would answer the snippet pages' addresses (which only the test serves).
  context = await browser.newContext({ viewport: DESKTOP, serviceWorkers: 'block' });
});

after(async () => {
  await browser?.close();
  await site?.close();
});

/** A page at `path` of the site holding `body` (the snippet as a documentation page would). */
async function snippetPage(path, body) {
  const p = watch(await context.newPage(), problems);
  const url = site.url + path;
  await p.route(url, (route) => route.fulfill({
    contentType: 'text/html; charset=utf-8',
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>snippet</title></head><body><main>${body}</main></body></html>`,
  }));
  await p.goto(url);
  return p;
}

/** The full page opened with a link's fragment: {iteration_time_s, memory, fits}. */
async function fullPage(fragment) {
  const p = watch(await context.newPage(), problems);
  await p.goto(`${site.url}#${fragment.replace(/^#/, '')}`);
  await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
  await settle(p);
  assert.equal(await p.evaluate(() => window.__stepcast.opened), 'link', 'the full page opens the link');
  const out = await p.evaluate(() => {
    const rows = [...document.querySelectorAll('#memory .mem-row')].map((r) => ({
      total: Number(r.dataset.total), capacity: Number(r.dataset.capacity), fits: r.dataset.fits === 'true' }));
    const worst = rows.reduce((a, r) => (r.total / r.capacity > a.total / a.capacity ? r : a));
    return {
      iteration_time_s: Number(document.querySelector('#metrics [data-metric="iteration_time_s"]').dataset.value),
      memory: worst.total,
      fits: !document.querySelector('#status').classList.contains('oom'),
    };
  });
  await p.close();
  return out;
}

describe('documented embeds estimate what the full page does', () => {
  test('the documentation has the snippets this suite checks', () => {
    const count = (where, kind) => SNIPPETS.filter((s) => s.where === where && s.kind === kind).length;
    assert.ok(count('README.md', 'calculator') >= 1, 'README.md: a <stepcast-calculator> snippet');
    assert.ok(count('web/README.md', 'calculator') >= 1, 'web/README.md: a <stepcast-calculator> snippet');
    assert.ok(count('web/README.md', 'iframe') >= 1, 'web/README.md: an iframe example');
    assert.ok(count('docs/embed.md', 'calculator') >= 1, 'docs/embed.md: a <stepcast-calculator> snippet');
    assert.ok(count('docs/embed.md', 'iframe') >= 1, 'docs/embed.md: an iframe example');
    assert.ok(count('web/examples/index.html', 'calculator') >= 2, 'the example page: its calculators');
    assert.ok(count('web/examples/index.html', 'iframe') >= 1, 'the example page: its iframe');
  });

  SNIPPETS.forEach((snippet, i) => {
    const attr = (name) => decode(new RegExp(`\\b${name}="([^"]*)"`).exec(snippet.html)?.[1] ?? '');
    const title = `${snippet.where}: ${snippet.kind} ${snippet.kind === 'iframe' ? attr('src').slice(0, 60) : attr('scenario').slice(0, 60)}`;
    test(title, async () => {
      const base = snippet.base ?? '';
      if (snippet.kind === 'calculator') {
        // The snippet as documented, with its script (the example page's elements get the page's).
        const script = /<script\b/.test(snippet.html) ? '' : '<script src="/stepcast-embed.js"></script>';
        const p = await snippetPage(`${base}__snippet-${i}.html`, snippet.html + script);
        await p.waitForFunction(() => {
          const el = document.querySelector('stepcast-calculator');
          return el?.scenario && el.dataset.state && el.rendered === JSON.stringify(el.scenario);
        }, null, { timeout: 20000 });
        const shown = await p.$eval('stepcast-calculator', (el) => {
          const m = (k) => el.shadowRoot.querySelector(`[data-metric="${k}"]`);
          return {
            iteration_time_s: Number(m('iteration_time_s').dataset.value),
            memory: Number(m('memory').dataset.value),
            fits: m('memory').dataset.fits === 'true',
            state: el.dataset.state,
            controls: [...el.shadowRoot.querySelectorAll('[data-control]')].map((c) => c.dataset.control),
          };
        });
        assert.notEqual(shown.state, 'error', `${title}: the calculator estimates (${await p.textContent('stepcast-calculator')})`);
        const wanted = (attr('controls') || 'tp,pp,micro_batch').split(',').map((c) => c.trim());
        assert.deepEqual(shown.controls, wanted, 'the controls the snippet names');
        const full = await fullPage(attr('scenario'));
        assert.equal(shown.fits, full.fits, `fits: the calculator says ${shown.fits}, the full page ${full.fits}`);
        assert.deepEqual(jsonDiff({ iteration_time_s: full.iteration_time_s, memory: full.memory },
          { iteration_time_s: shown.iteration_time_s, memory: shown.memory }), [], 'the full page\'s numbers');
        await p.close();
        return;
      }
      // An iframe of the page in its compact mode (the calculator): the documented host is this site.
      const src = new URL(attr('src').replace(/^https:\/\/stepcast\.example\//, site.url), site.url + base).href;
      const p = await snippetPage(`${base}__snippet-${i}.html`,
        snippet.html.replace(/src="[^"]*"/, `src="${src.replace(/&/g, '&amp;')}"`).replace(/loading="lazy"/, ''));
      const frame = await (await p.waitForSelector('iframe')).contentFrame();
      await calculatorSettled(frame);
      const shown = await calculatorShows(frame);
      assert.equal(await frame.evaluate(() => document.documentElement.classList.contains('embed')), true, 'the compact mode');
      const wanted = (new URL(src).searchParams.get('controls') || 'nodes,tp,pp,micro_batch,global_batch,recompute')
        .split(',').map((c) => c.trim());
      assert.deepEqual(shown.controls, wanted, 'the controls the iframe names');
      const full = await fullPage(new URL(src).hash);
      assert.deepEqual(jsonDiff(full, { iteration_time_s: shown.iteration_time_s, memory: shown.memory, fits: shown.fits }), [],
        'the full page\'s numbers');
      await p.close();
    });
  });

  test('no console errors, no dialogs', () => {
    assert.deepEqual(problems, []);
  });
});
