// The "Faster plans" card: the engine's plan search (stepcast search) around the scenario on show,
// its fastest plans that fit, and one click to put one of them into the form.
//
// The search runs in a worker of its own (engine.search), 0.4 s after the last change: the
// estimate of each change never waits for it, and typing starts no search until it pauses. While
// a search runs the card keeps the previous plans, dimmed, and says "searching…". The search
// covers clusters of one group of nodes: with several, it searches one group (a menu) on its own,
// and its plans are shown but cannot be applied to the whole cluster. A plan the engine refuses
// (the user's) is searched around anyway: the engine searches from it and says why the plan
// itself was not estimated (baseline_error); speed-ups are left out.
import { $, fill, h } from '../ui/dom.js';
import * as engine from '../engine/bridge.js';
import { applies, applyPlan } from '../form/index.js';
import { duration, gib, integer, percent } from '../ui/format.js';
import { setting } from '../scenario/frameworks.js';
import { clusterGroups, describeGroups } from '../scenario/groups.js';
import { choiceLabel, key, keysFor, plainDefault, searchSpace } from '../scenario/schema.js';
import { plainProblem } from '../ui/plain.js';
import { tip } from '../ui/tooltip.js';

const TOP = 10; // plans asked for
const SHOWN = 5; // plans shown before "Show all"
const DELAY_MS = 400; // after the last change
// What makes two resolved plans the same plan.
const SAME = ['tp', 'pp', 'dp', 'cp', 'vpp', 'micro_batch', 'recompute', 'sequence_parallel', 'zero_stage', 'precision',
  'tp_comm_overlap', 'moe_overlap', 'overlap_grad_reduce', 'first_stage_layers', 'last_stage_layers', 'embedding_in_split', 'loss_in_split',
  'bf16_moments', 'offload_modules', 'optimizer_cpu_offload', 'optimizer_offload_fraction'];
// Table columns: [heading, term (a tooltip: a result's term, or a plan key's path for its schema doc),
// class, abbreviation spelled out].
const COLUMNS = [
  ['#', null, 'num'], ['TP', null, 'num d', 'tensor-parallel GPUs'], ['PP', null, 'num d', 'pipeline stages'],
  ['DP', null, 'num d', 'data-parallel replicas (derived)'], ['CP', null, 'num d', 'context-parallel GPUs'],
  ['VPP', null, 'num d', 'virtual pipeline chunks per stage'], ['Micro-batch', 'plan.micro_batch', 'num d'],
  ['Recompute', 'plan.recompute', 'd'], ['Iteration time', 'iteration_time_s', 'num'], ['Speed-up', 'speedup', 'num'],
  ['MFU', 'mfu', 'num'], ['Peak memory', 'peak_memory', 'num'],
];

let presets = null;
let dom = null;
let timer = 0;
let want = null; // what the page shows: {key, text, scenario, report, groups, group, many}
let shown = null; // the search on screen: {key, result, ms, fallback, ...want}
let expanded = false;
let group = 0; // the group searched in a cluster of several

// For people and tests (window.__stepcast.search): `state` is 'idle', 'waiting' (a change is
// waiting for the pause), 'searching', 'done' or 'error'; `for` is the page's scenario text the
// plans on show are for; `result` the engine's answer; `ms` its time in the worker.
// `busy` counts the searches in flight in the worker, `applying` the plans being applied (Apply
// asks the engine once before the form changes).
export const searchStats = { state: 'idle', for: undefined, runs: 0, busy: 0, applying: 0, ms: NaN, result: null, group: 0,
  fallback: null };

// The plan's main keys that mean something for some models only (the schema's "needs": EP, expert
// TP and the token dispatcher for a model with experts, which the search varies too): a column
// each, after Recompute, while they apply to the scenario on show; and part of what makes a plan
// the same plan.
const conditional = () => keysFor('plan').filter((k) => k.object === 'plan' && k.needs);
const extraColumns = () => conditional().filter((k) => applies(k));
const samePlan = (a, b) => !!a && !!b && [...SAME, ...conditional().map((k) => k.name)].every((k) => a[k] === b[k]);
// A plan's layers per pipeline stage (the engine's stage_layers, first to last) when they are
// not the same on every stage: "15/16/15" (first, each between, last; "30/31" for two stages),
// and in words; null when even.
function unevenSplit(layers) {
  if (!Array.isArray(layers) || layers.length < 2) return null;
  const [first, between, last] = [layers[0], layers[1], layers[layers.length - 1]];
  if (layers.every((n) => n === first)) return null;
  const two = layers.length === 2;
  return {
    text: two ? `${first}/${last}` : `${first}/${between}/${last}`,
    words: two ? `layers: ${first} on the first stage, ${last} on the second`
      : `layers: ${first} on the first stage, ${between} on each of the ${layers.length - 2} between, ${last} on the last`,
  };
}
const plainPlan = (p, layers, split = unevenSplit(layers)) => `TP ${p.tp} · PP ${p.pp}${split ? ` (${split.words})` : ''} · DP ${p.dp} · CP ${p.cp} · VPP ${p.vpp} · micro-batch ${p.micro_batch} · ` +
  `recompute ${p.recompute}${extraColumns().map((k) => ` · ${k.label || k.name} ${p[k.name]}`).join('')} · ` +
  `overlap ${overlapOf(p)}`;
// The communication a plan overlaps with compute, as `stepcast search` prints it: TP collectives
// (behind the GEMMs; the engine's resolved plans have none at TP 1), EP exchanges (behind the
// other micro-batch) and the data-parallel gradient reduce (behind the backward, with DP > 1).
// The search turns TP and EP on wherever the training software can do it and the rules admit
// it, and tries the gradient reduce's both ways (the overlap's buckets can cost more than they hide).
const overlapOf = (p) => [p.tp_comm_overlap && 'TP', p.moe_overlap && 'EP', p.overlap_grad_reduce && p.dp > 1 && 'DP']
  .filter(Boolean).join('+') || 'none';
/** " (every plan listed: TP; yours: none)" when the plans listed overlap alike, and yours otherwise. */
function overlapNote(best, yours) {
  const all = new Set(best.map((c) => overlapOf(c.plan)));
  const mine = yours && overlapOf(yours);
  return all.size === 1 && mine && !all.has(mine) ? ` (every plan listed: ${[...all][0]}; yours: ${mine})` : '';
}
const OVERLAP_HEAD = ['Overlap', null, 'd', 'communication overlapped with compute: TP collectives, EP exchanges, the DP gradient reduce'];
/** A column's "?": a result's term (ui/terms.js), or a plan key's doc from the schema ("plan.recompute"). */
const help = (term, label) => (term.includes('.') ? tip(null, label, key(term)?.doc) : tip(term, label));
const times = (x) => (Number.isFinite(x) ? `${x >= 9.995 ? x.toFixed(1) : x.toFixed(2)}×` : '–');

/** Builds the card's elements (once), in #search. */
export function initSearch(thePresets) {
  presets = thePresets;
  const groupSelect = h('select', { id: 'search-group', 'data-local': 'true' });
  groupSelect.addEventListener('change', () => {
    group = Number(groupSelect.value);
    if (want) request(want.scenario, want.text, want.report);
  });
  const more = h('button', { type: 'button', class: 'link', id: 'search-more', hidden: true, 'aria-expanded': 'false' });
  more.addEventListener('click', () => {
    expanded = !expanded;
    renderRows();
    more.focus();
  });
  dom = {
    card: $('#search-card'),
    busy: $('#search-busy'),
    groupField: h('div', { class: 'field inline', hidden: true },
      h('label', { for: 'search-group' }, 'Group searched'), groupSelect,
      h('span', { class: 'hint', id: 'search-group-hint' })),
    groupSelect,
    summary: h('p', { class: 'search-summary', id: 'search-summary', tabindex: '-1' }),
    meta: h('p', { class: 'hint', id: 'search-meta' }),
    table: h('div', { class: 'table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Fastest plans table', hidden: true }),
    more,
  };
  $('#search-tip').replaceWith(tip('search', 'the plan search', searchSpace()?.doc));
  fill($('#search'), dom.groupField, dom.summary, dom.meta, dom.table, more);
  dom.summary.textContent = 'Searching the plans once the estimate is on show…';
}

/**
 * The page's scenario changed (or its estimate came back): `scenario` as sent to the engine (null
 * while a field is not a number), `text` its JSON, `report` its estimate and `resolved` the
 * engine's resolve() of it (both null when the engine refused it). Searches again after a pause;
 * the same search twice is not run again.
 */
export function request(scenario, text, report, resolved = null) {
  if (!dom) return;
  if (!scenario) {
    clearTimeout(timer);
    timer = 0;
    setBusy(true, 'waiting for the form', 'idle');
    searchStats.state = 'idle';
    return;
  }
  const groups = clusterGroups(scenario.cluster);
  const many = groups.length > 1;
  if (group >= groups.length) group = 0;
  // Several groups: one of them on its own, with the plan's own keys (placement and DP dropped).
  const searched = many ? { ...scenario, cluster: groups[group], plan: omit(scenario.plan, ['stages', 'replicas', 'dp']) }
    : scenario;
  const key = many ? JSON.stringify(searched) : text;
  want = { key, text, scenario, searched, report: many ? null : report, groups, group, many, resolved };
  if (shown && shown.key === key) {
    // The same search (the estimate of it came back, or an edit that changed nothing searched).
    clearTimeout(timer);
    timer = 0;
    shown = { ...shown, ...want };
    searchStats.for = text;
    searchStats.state = 'done';
    render();
    return;
  }
  searchStats.state = 'waiting';
  setBusy(true, 'searching…');
  clearTimeout(timer);
  timer = setTimeout(run, DELAY_MS);
}

const omit = (o, keys) => Object.fromEntries(Object.entries(o ?? {}).filter(([k]) => !keys.includes(k)));

// While a search runs, the card says for how long (the engine's search is one call: it cannot
// report how far it is). A change meanwhile searches again once it ends: the search worker is
// never ended for it (engine/bridge.js), and the estimate never waits for it.
let ticker = 0;
function progress(on) {
  clearInterval(ticker);
  if (!on) return;
  const t0 = performance.now();
  ticker = setInterval(() => {
    if (searchStats.state === 'searching') setBusy(true, `searching… ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }, 100);
}

async function run() {
  timer = 0;
  const job = want;
  searchStats.state = 'searching';
  searchStats.runs += 1;
  let answer;
  searchStats.busy += 1;
  progress(true);
  try {
    answer = await engine.search(job.key, TOP);
  } catch (err) {
    answer = { result: { error: { message: String(err.message), path: '' } }, engineMs: NaN };
  } finally {
    searchStats.busy -= 1;
    if (!searchStats.busy) progress(false);
  }
  if (!answer || job !== want) return; // a newer change: its search comes
  // The engine refuses the plan itself (it searched around it anyway): why, instead of speed-ups.
  const fallback = answer.result.baseline_error ?? null;
  shown = { ...job, result: answer.result, ms: answer.engineMs, fallback };
  searchStats.state = answer.result.error ? 'error' : 'done';
  searchStats.for = job.text;
  searchStats.ms = answer.engineMs;
  searchStats.result = answer.result;
  searchStats.group = job.group;
  searchStats.fallback = fallback;
  render();
}

function setBusy(on, text, kind = 'searching') {
  if (dom.card.classList.contains('busy') !== on) dom.card.classList.toggle('busy', on);
  if (dom.busy.hidden === on) dom.busy.hidden = !on;
  if (!on) return;
  if (dom.busy.textContent !== text) dom.busy.textContent = text;
  if (dom.busy.dataset.kind !== kind) dom.busy.dataset.kind = kind;
}

function render() {
  setBusy(false);
  const s = shown;
  const r = s.result;
  // Several groups: the menu of groups, and what the plans are for.
  dom.groupField.hidden = !s.many;
  if (s.many) {
    const info = describeGroups({ groups: s.groups }, presets, s.resolved?.groups);
    const key = info.map((g) => g.title).join('\n');
    if (dom.groupSelect.dataset.key !== key) {
      dom.groupSelect.dataset.key = key;
      fill(dom.groupSelect, info.map((g) => h('option', { value: g.index }, `group ${g.index}: ${g.title}`)));
    }
    dom.groupSelect.value = String(s.group);
    $('#search-group-hint').textContent = `The search covers one group of nodes: these plans are for group ${s.group} on its own` +
      (s.resolved ? ` (${integer(info[s.group].gpus)} of the cluster's ${integer(s.resolved.gpus)} GPUs)` : '') +
      ', to compare; they cannot be applied to this cluster of ' +
      `${s.groups.length} groups.`;
  }
  if (r.error) {
    // (In the page's words, as the plan's own error above the cards: plain.js.)
    dom.summary.replaceChildren(h('strong', null, 'No search: '), plainProblem(r.error).message.replace(/\.?$/, '.'));
    dom.meta.textContent = '';
    dom.table.hidden = true;
    dom.more.hidden = true;
    dom.card.dataset.state = 'error';
    return;
  }
  dom.card.dataset.state = 'done';
  const fit = r.evaluated - r.out_of_memory;
  dom.meta.replaceChildren(
    h('span', { 'data-count': 'evaluated', 'data-value': r.evaluated }, `${integer(r.evaluated)} plans checked`),
    Number.isFinite(s.ms) ? ` in ${s.ms < 10 ? s.ms.toFixed(1) : Math.round(s.ms)} ms` : '', ': ',
    h('span', { 'data-count': 'fit', 'data-value': fit }, `${integer(fit)} fit`),
    // Plans that fit only with the memory fixes the search tried (bf16 moments, offloading):
    // their peak memory is starred and its tooltip names the settings.
    r.fixed ? h('span', { 'data-count': 'fixed', 'data-value': r.fixed }, ` (${integer(r.fixed)} of them with the settings marked *)`) : '', ', ',
    h('span', { 'data-count': 'out_of_memory', 'data-value': r.out_of_memory }, `${integer(r.out_of_memory)} out of memory`), ', ',
    h('span', { 'data-count': 'rejected', 'data-value': r.rejected }, `${integer(r.rejected)} refused by the rules`),
    ` (TP, PP, ${setting(s.scenario.plan?.framework ?? plainDefault('plan.framework'), 'cp').cannot ? '' : 'CP, '}VPP, micro-batch${extraColumns().map((k) => `, ${k.label || k.name}`).join('')} and recompute varied; ` +
    `TP and EP communication overlapped wherever the training software can${overlapNote(r.best, s.report?.plan)}; ` +
    'the DP gradient reduce overlapped with the backward or not, whichever is faster; ' +
    `model, ${s.many ? 'GPUs of the group' : 'cluster'}, ` +
    'global batch, precision and training software kept).');
  dom.summary.replaceChildren(...summary(s));
  dom.table.hidden = r.best.length === 0;
  renderRows();
}

/** Speed-ups compare with the user's plan: not when the engine refused it, nor for one group of several. */
const baseline = (s) => (s.fallback || s.many || !(s.result.baseline_s > 0) ? NaN : s.result.baseline_s);

function summary(s) {
  const r = s.result;
  const best = r.best[0];
  const base = baseline(s);
  const yours = s.report?.plan;
  if (!r.evaluated) {
    return [h('strong', null, 'No plan passes the rules. '), `The ${integer(r.rejected)} plans tried all break one: ` +
      'the global batch, the layers or the heads do not divide as the plans need.'];
  }
  if (!best) {
    return [h('strong', null, 'No plan fits in memory. '), `All ${integer(r.evaluated)} plans the rules allow need more memory ` +
      'than the GPUs have: more GPUs, a smaller global batch or micro-batch, or another precision may fit.'];
  }
  const fastest = [h('strong', null, duration(best.iteration_time_s)), ' per step'];
  if (s.many) return ['On group ', String(s.group), ' alone, the fastest plan takes ', ...fastest, ` (${plainPlan(best.plan, best.stage_layers)}).`];
  if (s.fallback) {
    return [h('strong', null, 'Your plan is not valid'), ` (${plainProblem(s.fallback).message.replace(/\.$/, '')}); `,
      'the fastest valid plan that fits takes ', ...fastest, '.'];
  }
  if (samePlan(best.plan, yours)) {
    return [h('strong', null, 'Your plan is the fastest'), ` of the ${integer(r.evaluated - r.out_of_memory)} plans that fit` +
      (r.best[1] ? `; the next takes ${duration(r.best[1].iteration_time_s)} (${times(best.iteration_time_s / r.best[1].iteration_time_s)}).` : '.')];
  }
  const gain = base / best.iteration_time_s;
  if (s.report && !s.report.fits) {
    return [h('strong', null, 'Your plan does not fit in memory'), `; it would take ${duration(base)} per step. `,
      'The fastest plan that fits takes ', ...fastest, '.'];
  }
  if (gain < 0.9995) {
    return [h('strong', null, 'Your plan is faster'), ` (${duration(base)}) than every plan the search tries; `,
      'the fastest of them takes ', ...fastest, '.'];
  }
  if (gain <= 1.0005) return ['The fastest plan takes ', ...fastest, ', as fast as yours.'];
  return ['The fastest plan takes ', ...fastest, ': ', h('strong', { class: 'faster' }, `${times(gain)} faster`),
    ` than yours (${duration(base)}).`];
}

function renderRows() {
  const s = shown;
  if (!s || s.result.error) return;
  const { best } = s.result;
  const base = baseline(s);
  const yours = s.report?.plan;
  const capacity = s.report?.stages?.[0]?.memory_bytes?.capacity;
  const canApply = !s.many;
  const withSpeed = Number.isFinite(base);
  // An expert column only where it tells plans apart (one value in every plan and yours: said
  // once in the line above, not ten times; the table stays within the card).
  const extra = extraColumns().filter((k) => new Set([...best.map((c) => c.plan[k.name]), yours?.[k.name]]
    .filter((v) => v !== undefined)).size > 1);
  // The overlap: a column where the plans listed differ in it (one value for all, other than
  // yours, is said in the line above: a column more would not fit the card beside the expert ones).
  const overlap = new Set(best.map((c) => overlapOf(c.plan))).size > 1;
  const rows = best.map((c, i) => {
    const p = c.plan;
    const mine = samePlan(p, yours);
    const speed = base / c.iteration_time_s;
    const label = `plan ${i + 1}: ${plainPlan(p, c.stage_layers)}`;
    const split = unevenSplit(c.stage_layers);
    const cell = (k, text, extra = {}) => h('td', { class: COLUMNS[k][2], 'data-label': COLUMNS[k][0], ...extra }, text);
    return h('tr', {
      class: mine ? 'yours' : '', hidden: !expanded && i >= SHOWN, 'data-rank': i + 1,
      'data-plan': JSON.stringify(p), 'data-time': String(c.iteration_time_s),
    },
    h('th', { scope: 'row', class: 'num rank' }, String(i + 1)),
    cell(1, String(p.tp)),
    cell(2, split ? [String(p.pp), h('small', { class: 'split' }, split.text)] : String(p.pp), split ? { title: split.words } : {}),
    cell(3, String(p.dp)), cell(4, String(p.cp)), cell(5, String(p.vpp)),
    cell(6, String(p.micro_batch)), cell(7, p.recompute),
    extra.map((k) => h('td', { class: k.type === 'choice' ? 'd' : 'num d', 'data-label': k.label || k.name },
      k.type === 'choice' ? choiceLabel(p[k.name]) : String(p[k.name]))),
    overlap ? h('td', { class: 'd', 'data-label': 'Overlap' }, overlapOf(p)) : null,
    cell(8, duration(c.iteration_time_s), { 'data-value': String(c.iteration_time_s) }),
    withSpeed ? cell(9, times(speed), { class: `num${speed > 1.0005 ? ' faster' : ''}`, 'data-value': String(speed) }) : null,
    cell(10, percent(c.mfu), { 'data-value': String(c.mfu) }),
    // A plan that fits only with the engine's fixes (bf16 moments, offloading) is starred, the
    // fixes in its title (a word more would widen the table past its card); Apply puts them into
    // the form with the rest of the plan.
    cell(11, c.needs ? [gib(c.peak_memory_bytes), h('sup', { class: 'needs', 'aria-label': 'with fixes' }, '*')] : gib(c.peak_memory_bytes),
      { 'data-value': String(c.peak_memory_bytes), 'data-needs': c.needs || null,
        title: [capacity ? `of ${gib(capacity, 0)} per GPU (${percent(c.peak_memory_bytes / capacity, 0)})` : '',
          c.needs ? `fits with ${c.needs}` : ''].filter(Boolean).join('; ') || null }),
    h('td', { class: 'act' }, mine ? h('span', { class: 'yours-tag', title: 'the plan in the form' }, 'your plan')
      : canApply ? h('button', { type: 'button', class: 'apply', 'aria-label': `Apply ${label}`, title: `Put ${label} into the form`,
        onclick: () => apply(s, c) }, 'Apply') : null));
  });
  // Headings may wrap between words and after a hyphen ("Micro-batch"); the last word keeps its
  // tooltip button.
  const heading = (t, term) => {
    const cut = Math.max(t.lastIndexOf(' '), t.lastIndexOf('-'));
    return [cut < 0 ? '' : t.slice(0, cut + 1), h('span', { class: 'nowrap' }, t.slice(cut + 1), term ? help(term, t) : null)];
  };
  const extraHead = extra.map((k) => [k.label || k.name, null, k.type === 'choice' ? 'd' : 'num d', k.doc.replace(/`/g, '')]);
  const columns = [...COLUMNS.slice(0, 8), ...extraHead, ...(overlap ? [OVERLAP_HEAD] : []), ...COLUMNS.slice(8)];
  const head = columns.filter(([t]) => withSpeed || t !== 'Speed-up').map(([t, term, cls, spelled]) => h('th', { scope: 'col', class: cls },
    spelled ? h('abbr', { title: spelled }, t) : heading(t, term)));
  const added = extra.length + (overlap ? 1 : 0);
  fill(dom.table, h('table', { class: added >= 2 ? 'plans more-columns most-columns' : added ? 'plans more-columns' : 'plans' },
    h('caption', { class: 'sr-only' }, `The ${best.length} fastest plans that fit, fastest first`),
    h('thead', null, h('tr', null, head, h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Apply')))),
    h('tbody', null, rows)));
  dom.more.hidden = best.length <= SHOWN;
  dom.more.textContent = expanded ? `Show the first ${SHOWN}` : `Show all ${best.length}`;
  dom.more.setAttribute('aria-expanded', String(expanded));
}

async function apply(s, candidate) {
  // Only plans of the search on show, for the form as it stands.
  if (!shown || shown.key !== s.key || !want || want.key !== s.key) return;
  searchStats.applying += 1;
  try {
    await applyPlan(candidate.plan);
  } finally {
    searchStats.applying -= 1;
  }
  dom.summary.focus({ preventScroll: true });
}
