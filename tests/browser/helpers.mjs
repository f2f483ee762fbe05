// Shared by the link and embed browser suites: waiting for the page, reading its numbers and
// inputs, and catching anything a link might try to run.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';

import { CLI, ROOT, cliRun, jsonDiff } from '../wasm/common.mjs';
import { plainProblem } from '../../web/src/ui/plain.js';
import { setSchema } from '../../web/src/scenario/schema.js';
import { launch, serveSite } from './browser.mjs';

export const SHOTS = join(ROOT, 'build', 'screenshots');
mkdirSync(SHOTS, { recursive: true });
export const METRICS = ['iteration_time_s', 'tokens_per_s', 'mfu', 'model_tflops_per_gpu', 'micro_batches', 'parameters'];
export const DESKTOP = { width: 1360, height: 900 };
export const PHONE = { width: 390, height: 844 };
// The training-software profiles by id (presets/frameworks/*.json, which presets() returns).
const FRAMEWORK_DIR = join(ROOT, 'presets', 'frameworks');
export const FRAMEWORKS = Object.fromEntries(readdirSync(FRAMEWORK_DIR).filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(FRAMEWORK_DIR, f), 'utf8'))).map((f) => [f.id, f]));
/** Every plan flag a profile fills in. */
export const FLAGS = [...new Set(Object.values(FRAMEWORKS).flatMap((f) => Object.keys(f.plan)))];

/**
 * A test file's fixtures: the built site served, Chromium and a browser context (desktop size
 * plus `contextOptions`), opened before the file's tests and closed after them. `problems`
 * collects what `watch` records and must be empty at the end.
 */
export function suite(contextOptions = {}) {
  const fx = { site: null, browser: null, context: null, problems: [] };
  before(async () => {
    fx.site = await serveSite();
    fx.browser = await launch();
    fx.context = await fx.browser.newContext({ viewport: DESKTOP, ...contextOptions });
  });
  after(async () => {
    await fx.browser?.close();
    await fx.site?.close();
    assert.deepEqual(fx.problems, [], 'no console errors, exceptions or dialogs');
  });
  return fx;
}

/** A new page of `fx` (suite()) at `url`, watched, once its first estimate is on screen. */
export async function openPage(fx, url, viewport = null) {
  const p = watch(await fx.context.newPage(), fx.problems);
  if (viewport) await p.setViewportSize(viewport);
  await p.goto(url);
  await p.waitForSelector('#metrics [data-metric="iteration_time_s"]', { timeout: 20000 });
  await settle(p);
  return p;
}

/**
 * A new page of `fx` at `url`, watched, once the page has answered its scenario, settled: for a
 * plan the engine refuses, which has no numbers for openPage() to wait for.
 */
export async function openAnswered(fx, url) {
  const p = watch(await fx.context.newPage(), fx.problems);
  await p.goto(url);
  await p.waitForFunction(() => window.__stepcast?.updates > 0, null, { timeout: 20000 });
  await settle(p);
  return p;
}

/** Records console errors, uncaught exceptions and dialogs (alert, confirm, ...) of a page. */
export function watch(p, problems) {
  p.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  p.on('pageerror', (e) => problems.push(`exception: ${e.message}`));
  p.on('dialog', (d) => {
    problems.push(`dialog: ${d.type()} ${d.message()}`);
    d.dismiss().catch(() => {});
  });
  return p;
}

let schemaSet = false;
/**
 * What the page says for an engine error (web/src/ui/plain.js with the engine's schema): the page
 * words the engine's rules, keyed on their ids and values, with its labels; tests that compare
 * with the CLI pass the CLI's error objects (cliResolve's problems) through this.
 */
export function plainMessage(error) {
  if (!schemaSet) {
    const r = cliRun(['schema', '--format', 'json']);
    assert.equal(r.status, 0, r.stderr);
    setSchema(JSON.parse(r.stdout));
    schemaSet = true;
  }
  return plainProblem(error).message;
}

/** Waits until the estimate on screen is the one for the scenario the form shows. */
export async function settle(p) {
  await p.waitForFunction(() => {
    const s = window.__stepcast;
    return s && s.latest !== undefined && s.latest === s.rendered;
  }, null, { timeout: 15000 });
}

/**
 * Brings the Timeline card on screen and waits until it shows the plan on show (call it settled):
 * a plan estimated while the card is away from the screen comes without the schedule's events,
 * which the card asks for as it comes near (cards/timeline.js; #timeline is aria-busy meanwhile).
 */
export async function timelineShown(p) {
  await p.waitForFunction(() => {
    const el = document.querySelector('#timeline');
    if (el?.getAttribute('aria-busy') === 'false') return true;
    el?.scrollIntoView({ block: 'nearest' });
    return false;
  }, null, { timeout: 20000, polling: 100 });
}

/** Does `action` (a click, Back) and waits until the scenario on show is another one, then settles. */
export async function changes(p, action) {
  const before = await p.textContent('#scenario-json');
  await action();
  await p.waitForFunction((b) => document.querySelector('#scenario-json').textContent !== b, before, { timeout: 15000 });
  await settle(p);
}

/**
 * Does `action` that loads a scenario anew (an example from the menu, a scenario file) and waits
 * until the page has estimated it, then settles: unlike changes(), it also ends when the scenario
 * loaded is the one already on show (the page estimates it again: `updates` counts up).
 */
export async function reloads(p, action) {
  const before = await p.evaluate(() => window.__stepcast.updates);
  await action();
  await p.waitForFunction((n) => window.__stepcast.updates > n, before, { timeout: 15000 });
  await settle(p);
}

/**
 * Waits until the faster-plans card shows the search of the scenario on show (and its estimate is
 * on show); a plan being applied (Apply asks the engine before the form changes) is waited for first.
 */
export async function searchShown(p) {
  await p.waitForFunction(() => window.__stepcast?.search.applying === 0, null, { timeout: 20000 });
  await settle(p);
  await p.waitForFunction(() => {
    const s = window.__stepcast;
    return s.latest === s.rendered && s.search.for === s.latest && ['done', 'error'].includes(s.search.state) &&
      !document.querySelector('#search-card').classList.contains('busy');
  }, null, { timeout: 20000 });
}

/** Waits until the address bar holds the link of the scenario on show (and the pins); returns it. */
export async function linked(p) {
  await settle(p);
  await p.waitForFunction(() => {
    const s = window.__stepcast;
    return s.link && s.linked === s.latest && location.href === s.address;
  }, null, { timeout: 15000 });
  return p.evaluate(() => location.href);
}

/** The link of the plan in an address, without the pinned plans that follow it (#compare=...). */
export const planLink = (address) => address.replace(/#compare=.*$/, '');

export async function metrics(p) {
  const out = {};
  for (const k of METRICS) out[k] = Number(await p.getAttribute(`#metrics [data-metric="${k}"]`, 'data-value'));
  return out;
}

/**
 * Waits until the <stepcast-calculator> `selector` of `p` (a page or a frame: ?embed=1 is one)
 * shows the estimate and the link of the plan in its controls.
 */
export async function calculatorSettled(p, selector = 'stepcast-calculator') {
  await p.waitForFunction((sel) => {
    const el = document.querySelector(sel);
    if (!el?.scenario || !el.dataset.state) return false;
    const text = JSON.stringify(el.scenario);
    return el.rendered === text && el.linked === text;
  }, selector, { timeout: 20000 });
}

/** What calculator `selector` shows: its numbers by data-metric, fits, its controls and "Open in Stepcast". */
export async function calculatorShows(p, selector = 'stepcast-calculator') {
  return p.$eval(selector, (el) => {
    const root = el.shadowRoot;
    const numbers = Object.fromEntries([...root.querySelectorAll('[data-metric]')].map((m) => [m.dataset.metric, Number(m.dataset.value)]));
    return {
      ...numbers, fits: root.querySelector('[data-metric="memory"]').dataset.fits === 'true',
      controls: [...root.querySelectorAll('[data-control]')].map((c) => c.dataset.control), open: root.querySelector('.sc-open').href,
    };
  });
}

/** The headline numbers a calculator shows that the report has under the same names. */
export const CALCULATOR = ['iteration_time_s', 'tokens_per_s', 'mfu'];

/** A calculator's numbers (calculatorShows) are the CLI's for `report` (memory: the fullest stage). */
export function assertCalculator(report, shown, what = 'the calculator') {
  const pick = (o) => Object.fromEntries(CALCULATOR.map((k) => [k, o[k]]));
  const worst = report.stages.reduce((a, s) => (s.memory_bytes.total / s.memory_bytes.capacity >
    a.memory_bytes.total / a.memory_bytes.capacity ? s : a));
  assert.deepEqual(jsonDiff({ ...pick(report), memory: worst.memory_bytes.total }, { ...pick(shown), memory: shown.memory }), [],
    `${what}: the numbers differ from the CLI's`);
}

export async function pageScenario(p) {
  return JSON.parse(await p.textContent('#scenario-json'));
}

/** Every input of the page as it stands: id -> value (or checked). */
export async function formState(p) {
  return p.$$eval('#inputs input, #inputs select, #cost-form input', (els) => Object.fromEntries(els
    .filter((el) => el.id && el.type !== 'file' && el.id !== 'f-model-search')
    .map((el) => [el.id, el.type === 'checkbox' || el.type === 'radio' ? el.checked : el.value])));
}

/** The headline numbers equal `report`'s (1e-9 relative). */
export function assertNumbers(report, shown, what = 'headline numbers') {
  const want = Object.fromEntries(Object.keys(shown).map((k) => [k, report[k]]));
  assert.deepEqual(jsonDiff(want, shown), [], `${what} differ`);
}

/**
 * Nothing a link carried became markup: no <img>, no inline handler, no stray script (the pages'
 * own inline scripts known by what they do: ?embed=1, the service worker, the iframe's height).
 */
export async function assertNothingInjected(p) {
  const found = await p.evaluate(() => {
    const all = (root) => [...root.querySelectorAll('*')].flatMap((el) => [el, ...(el.shadowRoot ? all(el.shadowRoot) : [])]);
    const els = all(document);
    return {
      img: els.filter((el) => el.tagName === 'IMG').length,
      handlers: els.filter((el) => [...el.attributes].some((a) => a.name.startsWith('on'))).map((el) => el.tagName),
      scripts: els.filter((el) => el.tagName === 'SCRIPT' && !el.src && !/embed=1/.test(el.textContent) &&
        !/serviceWorker|stepcast:height/.test(el.textContent)).length,
      pwned: window.__pwned ?? null,
    };
  });
  assert.deepEqual(found, { img: 0, handlers: [], scripts: 0, pwned: null }, 'markup or code from the link');
}

/**
 * The first screen as a visitor sees it, and the whole page (tall window: no inner scrolling).
 * Whole-page screenshots (here and in the tests) wait up to 120 s, not Playwright's 30: a page
 * 10,000 pixels tall took longer than 30 s on CI's two cores while other work ran.
 */
export async function shootDesktop(p, name) {
  await p.evaluate(() => { window.scrollTo(0, 0); document.querySelector('#inputs').scrollTop = 0; });
  await p.screenshot({ path: join(SHOTS, `${name}.png`) });
  const height = await p.evaluate(() => Math.max(document.documentElement.scrollHeight,
    document.querySelector('#inputs').scrollHeight + 120));
  await p.setViewportSize({ width: DESKTOP.width, height });
  await p.waitForTimeout(50);
  await p.screenshot({ path: join(SHOTS, `${name}-full.png`), fullPage: true, timeout: 120000 });
  await p.setViewportSize(DESKTOP);
}

/** Waits until the service worker controls `p`, then cuts the network: reloads come from its cache. */
export async function goOffline(p, site, context) {
  await p.evaluate(async () => {
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller)
      await new Promise((ok) => navigator.serviceWorker.addEventListener('controllerchange', ok, { once: true }));
  });
  await site.close();
  await context.setOffline(true);
}
