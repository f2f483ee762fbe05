// The address: the scenario on show lives in the URL fragment, in the engine's link format
// (scenario/link.js). The page opens the link it is loaded with (and one pasted into it), and
// keeps the address up to date: 0.4 s after the typing pauses, or every 2 s while it goes on. Each
// change the user makes after a pause, an applied plan and a chosen example is a history entry,
// so the back button returns to the previous plan; the writes of one burst of typing replace it.
import { $, h } from '../ui/dom.js';
import * as compare from '../cards/compare.js';
import { tokensToTrain } from '../cards/cost.js';
import * as engine from '../engine/bridge.js';
import * as form from '../form/index.js';
import { getIn } from '../form/state.js';
import { copy } from '../ui/download.js';
import { billions, linkMessage, linkProblem, pageSettings } from '../scenario/link.js';
import { conditional } from '../scenario/schema.js';
import { stats } from './stats.js';

// Within a burst of typing the address is written once the changes pause URL_INTERVAL_MS, and at
// least every URL_MAX_WAIT_MS while they go on: browsers limit replaceState (Safari: 100 calls in
// 30 s; beyond, it throws), typing fast in a number field is many changes a second, and each write
// costs the main thread 10-40 ms with a long address (DeepSeek-V3 on 256 GPUs, issue 39): edits
// typed back to back waited behind one every 0.4 s.
const URL_INTERVAL_MS = 400;
const URL_MAX_WAIT_MS = 2000;
let currentScenario = null; // the last scenario read without a local error
let urlTimer = 0;
let urlTimerPushes = false; // whether the write urlTimer waits for starts a history entry
let urlWaitingSince = -Infinity; // when the first change the address does not show yet came
// History: `userChanged` marks a write as the user's (an edit, Apply, an example), not the page's
// own (opening a link, back and forward). A user's change 1.5 s or more after their previous one
// starts a new history entry (`startsEntry`, until its first write); closer ones are the same
// burst of typing and replace it. (By the changes' times, not the writes': within a burst the
// address may wait URL_MAX_WAIT_MS.)
const EDIT_BURST_MS = 1500;
let userChanged = false;
let lastUserChange = -Infinity;
let startsEntry = false;

let presets = null;
let fallback = ''; // what the page shows when a link does not open: "the default scenario (…)"

/** Takes the presets (a link's presets are checked against them) and the default scenario's name. */
export function initAddress(thePresets, defaultLabel) {
  presets = thePresets;
  fallback = defaultLabel;
}

/**
 * The next write of the address is the user's change; `newEntry`: a history entry of its own,
 * however soon after the previous change (an example, an import).
 */
export function userChange({ newEntry = false } = {}) {
  const t = performance.now();
  userChanged = true;
  if (newEntry || t - lastUserChange >= EDIT_BURST_MS) startsEntry = true;
  lastUserChange = t;
}

/** The address of the page without its fragment (nor pins, compare.js splitPins). */
export function pageBase() {
  const url = new URL(compare.splitPins(location.href).link);
  url.hash = '';
  return url.href.replace(/#$/, '');
}

/**
 * Writes the link into the address bar: replaceState once the changes pause 0.4 s (at least every
 * 2 s while they go on); a new history entry (Apply, an import, an edit after a pause) once, at
 * the first write of the change, in the frame after its estimate is painted (a pushState costs the
 * main thread 30-41 ms with a long address, issue 39), so that Back right after it undoes it
 * rather than skipping past it.
 */
export function writeUrl(now = false) {
  const starts = () => userChanged && startsEntry && location.hash.length > 1;
  const go = () => {
    clearTimeout(urlTimer);
    urlTimer = 0;
    urlWaitingSince = -Infinity;
    // A scenario no link can carry leaves the address without a fragment (not a stale link).
    const target = stats.address ?? location.href;
    if (target === location.href) {
      userChanged = false; // a change that gave the same link is no step of history
      return;
    }
    const push = starts();
    if (userChanged) startsEntry = false;
    userChanged = false;
    try {
      if (push) history.pushState(null, '', target);
      else history.replaceState(history.state, '', target);
      stats.historyLength = history.length;
    } catch { /* a browser's rate limit (Safari, Firefox): the next change writes it */ }
  };
  if (now) {
    go();
    return;
  }
  const push = starts();
  if (urlTimer && urlTimerPushes) return; // the entry's first write, due at once, writes this too
  const t = performance.now();
  if (!urlTimer) urlWaitingSince = t;
  clearTimeout(urlTimer);
  urlTimerPushes = push;
  // Never before the estimate it follows is painted (the frame after it). A write cancelled
  // meanwhile (urlTimer reset by a pasted link) does not happen.
  const id = setTimeout(() => requestAnimationFrame(() => {
    if (urlTimer === id) urlTimer = setTimeout(go, 0);
  }), push ? 0 : Math.max(0, Math.min(URL_INTERVAL_MS, urlWaitingSince + URL_MAX_WAIT_MS - t)));
  urlTimer = id;
}

/** Asks the engine for the link of the scenario on show (and the cost inputs), then writes it. */
export async function syncLink(scenario = currentScenario, text = JSON.stringify(scenario)) {
  if (!scenario) return;
  currentScenario = scenario;
  const tokens = tokensToTrain(); // (in billions, as the link's reader takes them)
  const page = pageSettings(Number.isFinite(tokens) ? String(tokens / 1e9) : '', $('#f-price').value);
  // A link carries what the measured runs fitted (the scales), not the runs themselves.
  let linked = scenario;
  if (Array.isArray(scenario.calibration?.runs)) {
    const c = await engine.compactCalibration(JSON.stringify(scenario), 'link');
    if (!c) return; // superseded
    if (c.scenario) linked = c.scenario;
  }
  let r = await engine.toLink(linked, page, pageBase(), 'link');
  if (!r) return; // superseded
  // Tokens or a price past what a link carries (the reader's range: 10^21 tokens, 10^6 USD): the
  // link without them, and why, beside the cost form; the address keeps the plan (issue 38:
  // 2·10^21 tokens left the address without a fragment, and a reload lost the plan).
  let leftOut = '';
  if (r.error) {
    const names = { tokens: 'the tokens to train', price_per_gpu_hour: 'the price' };
    const tries = [['tokens'], ['price_per_gpu_hour'], ['tokens', 'price_per_gpu_hour']]
      .filter((keys) => keys.every((k) => k in page));
    for (const keys of tries) {
      const rest = Object.fromEntries(Object.entries(page).filter(([k]) => !keys.includes(k)));
      const again = await engine.toLink(linked, rest, pageBase(), 'link');
      if (!again) return; // superseded
      if (again.error) continue;
      leftOut = `The link leaves out ${keys.map((k) => names[k]).join(' and ')} (${linkMessage(r.error)}); it keeps the plan.`;
      r = again;
      break;
    }
  }
  const note = $('#cost-link');
  note.textContent = leftOut;
  note.hidden = !leftOut;
  const copy = $('#copy-link');
  stats.address = compare.addressWith(r.error ? pageBase() : r.link); // with the pins
  if (r.error) {
    stats.link = null;
    stats.linked = text;
    copy.disabled = true;
    copy.title = `This scenario cannot be written as a link: ${linkMessage(r.error)}.`;
    $('#cli-link').textContent = copy.title;
    $('#link-left-out').textContent = '';
    writeUrl();
    return;
  }
  stats.link = r.link;
  stats.linked = text;
  if (stats.rendered === text) compare.linked(scenario, r.link);
  copy.disabled = false;
  // What the link leaves out (an imported model's source and notes: text for people, which no
  // estimate reads), said where the link is shown and on the button.
  // In words, not the engine's key paths (share_link.cpp's kModelTextForPeople).
  const words = { 'model.source': "the model's source", 'model.notes': "the model's notes", 'model.recipe': "the preset's recipe" };
  const left = Array.isArray(r.left_out) ? r.left_out.map((path) => words[path] ?? String(path)) : [];
  copy.title = [left.length ? `The link leaves out ${left.join(' and ')}: text for people, which the numbers do not depend on.` : '', leftOut]
    .filter(Boolean).join(' ');
  $('#link-left-out').textContent = left.length ? ` ${copy.title}` : '';
  copy.dataset.link = r.link;
  $('#cli-link').textContent = `stepcast estimate --link '${r.link}'`;
  writeUrl();
}

/** A message about the link the page was opened with, kept until dismissed or a new link. */
export function linkNotice(...content) {
  const box = $('#link-status');
  if (!content.length) {
    box.hidden = true;
    return;
  }
  box.replaceChildren(...content, ' ', h('button', { type: 'button', class: 'link', onclick: () => linkNotice() }, 'Dismiss'));
  box.hidden = false;
}

/**
 * Puts the scenario in the address (or `url`) into the form: true when it holds it (the caller
 * estimates it). A link that cannot be read, or names a preset that does not exist, leaves a
 * message and 'refused'; a link cut when it was copied (the engine's rule link_incomplete: no end
 * marker) a message of its own and 'incomplete': either way, on a page already showing a plan,
 * the caller keeps it (a bad paste does not cost the user their plan); on a fresh page it shows
 * the default. False: no link (or a place on the page).
 */
export async function openLink(address = location.href) {
  const url = compare.splitPins(address).link;
  const hash = url.indexOf('#');
  if (hash < 0 || hash === url.length - 1) return false;
  if (inPage(url.slice(hash))) return false; // a place on the page (#results), not a plan
  let r;
  try {
    r = await engine.fromLink(url);
  } catch (err) {
    r = { error: { message: String(err.message) } };
  }
  if (r.error?.rule === 'link_incomplete') {
    stats.opened = 'incomplete';
    const last = String(r.error.values?.last ?? '');
    linkNotice(h('strong', null, 'This link is incomplete: '),
      `it stops after “${last.length > 80 ? `${last.slice(0, 77)}…` : last}”, so the rest of its plan was lost when it was copied. ` +
      'Copy the whole link again (it ends with “&end”). ',
      stats.opens > 0 ? 'The plan on show is unchanged.' : `Showing ${fallback} instead.`);
    return 'incomplete';
  }
  const problem = r.error ? `it could not be read (${linkMessage(r.error)})` : linkProblem(r.scenario, presets);
  if (problem) {
    stats.opened = problem;
    linkNotice(h('strong', null, 'This link does not open a scenario: '), `${problem}. `,
      stats.opens > 0 ? 'The plan on show is unchanged.' : `Showing ${fallback} instead.`);
    return 'refused';
  }
  try {
    await form.open(r.scenario);
  } catch (err) {
    stats.opened = `the page cannot show it (${err.message})`;
    linkNotice(h('strong', null, 'This link does not open a scenario: '), `${stats.opened}. Showing ${fallback} instead.`);
    return false;
  }
  if (typeof r.page?.tokens === 'number') $('#f-tokens').value = billions(r.page.tokens);
  if (typeof r.page?.price_per_gpu_hour === 'number') $('#f-price').value = String(r.page.price_per_gpu_hour);
  stats.opened = 'link';
  // A key that does nothing for the link's model (EP for a dense one) is left out, as the form
  // leaves it: said, not silently (the CLI refuses such a scenario).
  const shown = form.current().scenario;
  const dropped = conditional().filter((k) => getIn(r.scenario, k.path) !== undefined && getIn(shown, k.path) === undefined)
    .map((k) => `${k.path}=${JSON.stringify(getIn(r.scenario, k.path))} (it needs ${k.needs})`);
  linkNotice(...(dropped.length ? [h('strong', null, 'Left out of this link, as it does nothing here: '), `${dropped.join(', ')}.`] : []));
  return true;
}

/** The element a fragment names ("#results"), or null: a fragment of a plan (key=value) names none. */
function inPage(fragment) {
  if (!fragment || fragment.length < 2 || fragment.includes('=')) return null;
  let id;
  try { id = decodeURIComponent(fragment.slice(1)); } catch { return null; }
  return document.getElementById(id);
}

/**
 * Wires what changes the address: Copy link, a link pasted into the address bar of the open page
 * (`openPasted()` opens it), and leaving the page.
 */
export function wireAddress(openPasted) {
  $('#copy-link').addEventListener('click', async () => {
    if (!stats.link) return;
    writeUrl(true);
    await copy($('#copy-link'), stats.address, { label: 'Copy link', done: 'Link copied', refused: 'Copy from the address bar' });
  });
  // The page's own links to a place on it ("Skip to the results", the phone's summary bar: #results)
  // move there without touching the address: its fragment is the plan's link, and a fragment
  // naming an element would be opened as a link that is not one (the default plan in place of the
  // user's, said as an error).
  document.addEventListener('click', (e) => {
    const a = e.target instanceof Element ? e.target.closest('a[href^="#"]') : null;
    const to = a && inPage(a.getAttribute('href'));
    if (!to || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    to.scrollIntoView();
    to.focus({ preventScroll: true });
  });
  // A link pasted into the address bar of the open page (only the fragment changes).
  // The event's own URL: a throttled replaceState of the previous scenario may already have
  // rewritten location.href, and must not overwrite the pasted link afterwards.
  window.addEventListener('hashchange', (e) => {
    // A place on the page typed after the address (#results): the browser went there; the
    // address keeps the plan's link (a write of it still waiting goes on waiting).
    if (inPage(new URL(e.newURL).hash) && stats.address) {
      history.replaceState(history.state, '', stats.address);
      return;
    }
    clearTimeout(urlTimer);
    urlTimer = 0;
    userChanged = false; // Back, Forward or a pasted link: the page's own writes follow
    if (e.newURL === stats.address) return;
    const plan = compare.splitPins(e.newURL).link;
    // The plan on show with other pins (Back past a pin): the pins stay as the card has them.
    if (plan === stats.link) history.replaceState(history.state, '', stats.address);
    if (plan === stats.link || new URL(plan).hash.length <= 1) return;
    if (location.href !== e.newURL) history.replaceState(history.state, '', e.newURL);
    openPasted();
  });
  // Back or Forward to an entry whose query differs (a pin wrote ?compare= into the entry it was
  // made on) fires popstate and no hashchange: the address showed the entry's plan over the
  // numbers of the one before (issue 37 item 11). Open it as a pasted link, the pins kept in its
  // address as they are kept in the card. (When only the fragment differs, hashchange opens it.)
  window.addEventListener('popstate', () => {
    const url = new URL(location.href);
    if (location.href === stats.link || url.hash.length <= 1) return;
    const before = new URL(stats.link ?? location.href);
    if (before.search === url.search) return; // hashchange follows
    clearTimeout(urlTimer);
    urlTimer = 0;
    userChanged = false;
    history.replaceState(history.state, '', compare.addressWith(location.href));
    openPasted();
  });
  // Leaving: the address holds the latest change even if its write was still waiting.
  window.addEventListener('pagehide', () => writeUrl(true));
}
