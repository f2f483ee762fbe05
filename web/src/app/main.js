// Stepcast's page: starts the engine worker, builds the form from the engine's schema and
// presets, wires the cards, and opens the scenario in the address (or the default one). Then
// every change re-estimates at once (update.js) and the address follows (address.js). With
// ?embed=1 the page is the compact calculator for iframes instead (embed/frame.js).
//
//   stats.js               window.__stepcast: what the page is doing, for people and tests
//   status.js              the status line, the engine's download, the live region
//   update.js              the update cycle: form -> engine -> cards
//   address.js             the link in the address bar, history, pasted links
//   examples.js            the Example menu and Reset
//   calibration_badge.js   what a calibration fitted, on the Estimate card
import './style.css';

import { $, h } from '../ui/dom.js';
import * as compare from '../cards/compare.js';
import { initCards } from '../cards/index.js';
import { renderCost } from '../cards/cost.js';
import { setReportSchema } from '../cards/parts.js';
import { initScenarioJson } from '../cards/scenario_json.js';
import { initSearch } from '../cards/search.js';
import * as engine from '../engine/bridge.js';
import * as form from '../form/index.js';
import { initAddress, linkNotice, openLink, syncLink, userChange, wireAddress } from './address.js';
import { initDrop } from './drop.js';
import { clearChoice, defaultLabel, defaultScenario, initExamples, showDefault } from './examples.js';
import { stats } from './stats.js';
import { setStatus, showLoading } from './status.js';
import { initUpdate, load, reload, update } from './update.js';

/** Registers the service worker once the engine is in: its precache then finds every file in the HTTP cache. */
function registerServiceWorker() {
  if (import.meta.env.PROD && 'serviceWorker' in navigator && location.protocol.startsWith('http'))
    navigator.serviceWorker.register('./sw.js').catch(() => { /* the page works without it */ });
}

/** Shows the scenario of the address, or the default one; counts in stats.opens when done. */
async function openAddress() {
  const opened = await openLink();
  if (opened === true) {
    clearChoice();
    reload();
  } else if ((opened === 'incomplete' || opened === 'refused') && stats.opens > 0) {
    syncLink(); // the plan on show stays, and its own link goes back in the address
  } else {
    if (!location.hash || location.hash === '#') stats.opened = 'default';
    await showDefault();
  }
  stats.opens += 1;
}

/** A scenario the user brings (an import, a file): a history entry of its own. */
async function openTheirs(s) {
  userChange({ newEntry: true });
  clearChoice();
  await load(s);
}

async function init() {
  let ready;
  const stopLoading = showLoading();
  try {
    ready = await engine.ready();
  } catch (err) {
    setStatus('error', h('strong', null, 'The engine did not load: '), String(err.message));
    return;
  } finally {
    stopLoading();
    registerServiceWorker();
  }
  const { presets } = ready;
  setReportSchema(ready.reportSchema);
  $('#version').textContent = `engine ${ready.version}`;
  initUpdate(presets);
  initAddress(presets, defaultLabel(presets));
  form.buildForm(presets, ready.schema, (t) => {
    clearChoice();
    userChange();
    update(t);
  });
  initSearch(presets);
  // Pins live in the address, after the plan's fragment (compare.js): every address written carries them.
  compare.init(presets, () => {
    history.replaceState(history.state, '', compare.addressWith(location.href));
    syncLink();
  });
  initExamples(presets);
  // Import and export: its code loads on the card's first click (no first paint needs it).
  $('#io-card').addEventListener('click', (event) => {
    const button = event.target.closest('button');
    if (!button) return;
    // An import's previous verdict goes at once, not when the code has loaded (a test, and a
    // reader, would take it for this paste's): the status reads as busy meanwhile.
    if (button.id === 'import-go' || button.id === 'hf-fetch') $('#import-status').className = 'import-status busy';
    import('../cards/import_export.js').then((m) => m.click(button, () => structuredClone(form.current().scenario), openTheirs));
  });
  initCards();
  initDrop();
  // How many GPUs for a deadline: its code loads on the button's first click.
  $('#deadline-go').addEventListener('click', () => import('../cards/deadline.js').then((m) =>
    m.run(() => structuredClone(form.current().scenario), (nodes, plan) => form.applyCluster(nodes, plan))));
  $('#cost-form').addEventListener('input', () => {
    userChange();
    renderCost();
    syncLink();
  });
  wireAddress(openAddress);
  initScenarioJson(presets, load, (name, why) =>
    setStatus('error', h('strong', null, `${name}: `), `not a scenario this page can show (${why}).`));

  // The pins open beside the plan (the address keeps them meanwhile), then the address has those that did.
  const pinsOpened = compare.open(location.href);
  await openAddress();
  const pinProblems = await pinsOpened;
  syncLink();
  if (pinProblems.length) linkNotice(h('strong', null, 'Some pinned plans of this link did not open: '), `${pinProblems.join('; ')}.`);
}

/** ?embed=1: the compact calculator (embed/frame.js), then the service worker, as for the page. */
async function initEmbed() {
  const { showCalculator } = await import('../embed/frame.js');
  await showCalculator(defaultScenario);
  await engine.ready().catch(() => { /* the calculator says so */ });
  registerServiceWorker();
}

// index.html marks ?embed=1 on <html> before the first paint.
if (document.documentElement.classList.contains('embed')) initEmbed();
else init();
