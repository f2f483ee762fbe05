// Compare plans side by side, in Chromium: pin the plan on show, change it, and the table holds both
// with the CLI's numbers and the differences marked; the comparison is in the link and a fresh page
// opened from it shows the same table; at most four pins; unpinning leaves the address; a phone
// scrolls the table, not the page. Screenshots under build/screenshots/.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { CLI, cliEstimateLink, requireBuilt } from '../wasm/common.mjs';
import { PHONE, SHOTS, changes, linked, settle, openPage, suite } from './helpers.mjs';

requireBuilt(CLI, 'build it with cmake -S . -B build && make -C build stepcast');

const fx = suite({ serviceWorkers: 'block' });
const DEFAULT = 'v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096';

const open = (url) => openPage(fx, url);

/** The comparison as shown: {heads: [column names], rows: {label: [{value, diff, text}]}}. */
async function table(p) {
  return p.evaluate(() => {
    const t = document.querySelector('#compare table');
    if (!t || document.querySelector('#compare-card').hidden) return null;
    const heads = [...t.querySelectorAll('thead .cmp-name')].map((e) => e.textContent);
    const rows = {};
    for (const tr of t.querySelectorAll('tbody tr:not(.cmp-group)')) {
      rows[tr.querySelector('th').textContent] = [...tr.querySelectorAll('td')].map((td) => ({
        value: td.dataset.value, text: td.textContent, diff: td.className,
      }));
    }
    return { heads, rows };
  });
}

/** The CLI's report for the plan in `url`'s fragment. */
function cli(url) {
  const r = cliEstimateLink(url);
  assert.equal(r.status, 0, r.stderr);
  return r.report;
}

describe('compare plans', () => {
  test('pin, change, compare: both plans with the CLI\'s numbers, differences marked; shared by link', async () => {
    const p = await open(`${fx.site.url}#${DEFAULT}`);
    assert.equal(await p.isVisible('#compare-card'), false, 'nothing pinned: no card');
    const first = await linked(p);
    await p.click('#pin-plan');
    assert.equal(await p.textContent('#pin-plan'), 'Pinned');
    assert.equal(await p.isDisabled('#pin-plan'), true);
    await p.fill('#f-tp', '4');
    await p.fill('#f-pp', '8');
    await settle(p);
    const second = await linked(p);
    assert.match(second, /\?compare=v%3D3%26model%3Dllama3-70b%26node%3Ddgx-h100%26nodes%3D8%26tp%3D8%26pp%3D4/, 'the pin is in the address');
    const t = await table(p);
    assert.deepEqual(t.heads, ['Pinned 1', 'On show']);
    const [a, b] = [cli(first), cli(second)];
    assert.deepEqual(t.rows['Iteration time'].map((c) => Number(c.value)), [a.iteration_time_s, b.iteration_time_s]);
    assert.deepEqual(t.rows.MFU.map((c) => Number(c.value)), [a.mfu, b.mfu]);
    assert.deepEqual(t.rows['Memory, stage 7'].map((c) => c.value), ['NaN', String(b.stages[7].memory_bytes.total)]);
    // TP 4 × PP 8 is faster here: marked better, with its change in percent.
    assert.ok(b.iteration_time_s < a.iteration_time_s);
    assert.match(t.rows['Iteration time'][1].diff, /diff better/);
    const pct = ((b.iteration_time_s / a.iteration_time_s - 1) * 100).toFixed(1).replace('-', '−');
    assert.ok(t.rows['Iteration time'][1].text.endsWith(` ${pct} %`), t.rows['Iteration time'][1].text);
    assert.match(t.rows.TP[1].diff, /diff/);
    assert.equal(t.rows.Recompute[1].diff, '', 'the same recompute: not marked');
    assert.equal(t.rows['Fits in memory'][1].diff, '');
    await p.screenshot({ path: join(SHOTS, 'compare.png'), fullPage: false });

    // The link, fresh: the same table.
    const q = await open(second);
    await p.close();
    await q.waitForFunction(() => !document.querySelector('#compare-card').hidden);
    assert.deepEqual(await table(q), t);

    // Unpin: the card goes, and the address no longer carries it.
    await q.click('.cmp-unpin');
    assert.equal(await q.isVisible('#compare-card'), false);
    assert.doesNotMatch(await linked(q), /compare=/);
    await q.close();
  });

  test('at most four pins; "Show" opens a pinned plan; a phone scrolls the table, not the page', async () => {
    const p = await open(`${fx.site.url}#${DEFAULT}`);
    for (const tp of [8, 4, 2, 1]) {
      await p.fill('#f-tp', String(tp));
      await settle(p);
      await linked(p);
      await p.click('#pin-plan');
    }
    await p.fill('#f-pp', '2');
    await linked(p); // the plan on show gets its column once its link is in (it is what a pin keeps)
    assert.equal(await p.isDisabled('#pin-plan'), true, 'four pinned: no fifth');
    assert.match(await p.getAttribute('#pin-plan', 'title'), /At most 4 pinned plans/);
    assert.deepEqual((await table(p)).heads, ['Pinned 1', 'Pinned 2', 'Pinned 3', 'Pinned 4', 'On show']);
    // "Show" is a link to the pinned plan's fragment: the page opens it asynchronously (hashchange).
    await changes(p, () => p.locator('.cmp-show').nth(1).click());
    assert.equal(await p.inputValue('#f-tp'), '4');
    assert.equal(await p.inputValue('#f-pp'), '4');
    assert.deepEqual((await table(p)).heads, ['Pinned 1', 'Pinned 2', 'Pinned 3', 'Pinned 4'], 'the plan on show is pinned 2');
    await p.setViewportSize(PHONE);
    await p.waitForTimeout(100);
    assert.equal(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways page scroll');
    await p.locator('#compare-card').scrollIntoViewIfNeeded();
    await p.screenshot({ path: join(SHOTS, 'compare-phone.png'), fullPage: false });
    await p.close();
  });
});
