// The inputs of the page. One scenario object is the state (form/state.js: what the user set; a
// key left out is the engine's to default); the form is rendered from it and from the engine's
// resolve() of it (defaults and derived values: DP, the ZeRO stage, stage placement and layers,
// replica micro-batches, the link between groups, ...), and input events update it (form/bind.js).
// Nothing here restates an engine rule: errors come back from the engine with the paths of the
// inputs they involve and go to the control that caused them (form/errors.js).
//
//   model.js      the model: a preset or a custom shape (fields from the schema)
//   cluster.js    the cluster form (group 0), more groups, the link between them
//   plan.js       the plan and the Megatron-LM options (fields from the schema)
//   placement.js  where stages or replica sets run (plan.stages / plan.replicas)
//   calibration.js  the scenario's calibration: nccl-tests links, GEMM tables, layer profiles and measured runs
//   errors.js     problems next to their controls
import { $, $$ } from '../ui/dom.js';
import * as engine from '../engine/bridge.js';
import { plainProblem } from '../ui/plain.js';
import { plainDefault, searchSpace, setSchema } from '../scenario/schema.js';
import { listen, notify } from './bind.js';
import * as calibration from './calibration.js';
import * as cluster from './cluster.js';
import { fieldFor, showProblems } from './errors.js';
import * as model from './model.js';
import * as needs from './needs.js';
import * as placement from './placement.js';
import * as planForm from './plan.js';
import { groups, localProblems, plan, reset, state } from './state.js';

export { fieldFor };

/** Whether schema key `k` applies to the scenario on show (its "needs", needs.js). */
export const applies = needs.appliesTo;

/**
 * Builds every input from the presets and the schema; `onChange(timeStamp)` runs after each
 * change of the state (the page re-renders and asks the engine).
 */
export function buildForm(presets, schema, onChange) {
  setSchema(schema);
  model.build(presets);
  cluster.build(presets);
  planForm.build(presets);
  placement.build();
  calibration.build();
  listen($('#inputs'), onChange);
  calibration.wire(notify);
}

/**
 * Renders the form from the state (and the engine's last answer). First, the keys that do not
 * apply to the scenario (needs.js) leave it: what is then shown, sent and linked is without them.
 */
export function render() {
  needs.apply();
  model.render();
  cluster.render();
  planForm.render();
  placement.render();
  calibration.render();
  // The form's "?" buttons are not Tab stops (forty of them would double the cycle): a keyboard
  // user presses "?" on a field for its help (tooltip.js); the mouse and touch still click them.
  for (const b of $$('#inputs .tip:not([tabindex])')) b.tabIndex = -1;
}

/**
 * Shows a scenario (from a link, a file or the examples): its keys become the state, as they are,
 * except its name (which describes it as it was written) and a DP equal to the one the engine
 * derives (left to the engine, so that a change of TP or PP keeps it right).
 */
export async function open(scenario) {
  const s = structuredClone(scenario);
  delete s.name;
  if (s.plan?.dp !== undefined) {
    const probe = structuredClone(s);
    delete probe.plan.dp;
    const r = await engine.resolve(JSON.stringify(probe));
    if (r.scenario?.plan.dp === s.plan.dp) delete s.plan.dp;
  }
  reset(s);
  cluster.forget();
  placement.forget();
  render();
}

/**
 * The scenario to estimate: {scenario, problems}; problems are the fields whose text is not a
 * number ([{path, message}]): nothing is sent while there is one.
 */
export function current() {
  return { scenario: state.scenario, problems: localProblems() };
}

/** Shows the page's own problems (fields that are not numbers) at their fields. */
export function showLocal(problems) {
  return showProblems(problems);
}

/**
 * The engine's answer for the scenario on show: its resolve() (derived values into the form) or
 * its errors (each at its control). Returns the errors with the field each went to.
 */
export function answer({ resolved, errors, report }) {
  state.resolved = resolved ?? null;
  state.predicted_s = report?.iteration_time_s ?? null;
  // The engine's wording, with JSON paths, becomes the page's (the controls' labels and numbers).
  state.errors = (errors ?? []).map((e) => plainProblem(e));
  render();
  planForm.reveal(state.errors);
  model.reveal(state.errors);
  return showProblems(state.errors);
}

/** The layout the results describe: 'stages', 'replicas' or 'none' (one group, even split). */
export const layout = () => placement.mode();

/** Each group's name, GPU and GPU count (for the results). */
export const groupInfo = () => cluster.groupInfo();
export const showCalibrationWarnings = (warnings) => calibration.showWarnings(warnings);

// The layer split the search picks with each PP × VPP (engine/src/tools/search.cpp sets these
// four beside the keys its schema lists as varied).
const SPLIT_KEYS = ['embedding_in_split', 'loss_in_split', 'first_stage_layers', 'last_stage_layers'];

/** The plan keys the search varies (the engine's schema, search.varies) and its layer split; DP is derived. */
const searchedKeys = () => [...Object.keys(searchSpace()?.varies ?? {}).filter((p) => p.startsWith('plan.'))
  .map((p) => p.slice('plan.'.length)), ...SPLIT_KEYS].filter((k) => k !== 'dp');

/**
 * Sets the plan keys of an engine fit fix ("plan.recompute=selective plan.recompute_modules=\"core_attn
 * mlp\"": what `stepcast estimate` prints as its settings) in the form, as one change. DP goes back to
 * derived: a fix that moves TP or PP gives the DP the same GPUs leave, which the engine derives.
 */
export function applySettings(settings) {
  const next = structuredClone(state.scenario);
  next.plan ??= {};
  for (const [, k, quoted, bare] of settings.matchAll(/plan\.(\w+)=(?:"([^"]*)"|(\S+))/g)) {
    if (k === 'dp') continue;
    next.plan[k] = quoted !== undefined ? quoted
      : bare === 'true' || bare === 'false' ? bare === 'true'
        : /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(bare) ? Number(bare) : bare;
  }
  delete next.plan.dp;
  state.scenario = next;
  state.local.clear();
  state.lastChanged = null;
  notify();
}

/** A row of the deadline sweep: its node count on the cluster (one group), then its plan as Apply does. */
export async function applyCluster(nodes, p) {
  state.scenario.cluster = { ...state.scenario.cluster, nodes };
  await applyPlan(p);
}

/**
 * Sets the plan's controls to a plan from the search (the engine's resolved plan, every key).
 * Only what the search varied is taken from it (TP, PP, VPP, CP, micro-batch, recompute, the
 * expert keys, the layer split): every other key is the form's as it was, so a flag of the
 * training software stays the profile's (Apply then FP8 turns on the profile's FP8 parameter
 * gather, as the same plan typed fresh; issue 37). Of those, the keys that differ from the plan in
 * the form are set, DP goes back to derived (the search derives it) and, on one group, the layers
 * to the search's split. A varied key the form leaves to the engine (sequence parallelism, the
 * overlaps) stays left out when the engine gives it the plan's value anyway (one resolve()), so
 * that it stays marked "from" the software. One group only: the search does not search clusters
 * of several.
 */
export async function applyPlan(p) {
  const before = JSON.stringify(state.scenario);
  const next = structuredClone(state.scenario);
  next.plan ??= {};
  const mine = next.plan;
  if (groups().length === 1) {
    delete mine.stages;
    delete mine.replicas;
    delete mine.first_stage_layers;
    delete mine.last_stage_layers;
  }
  const leftOut = []; // keys the scenario left out that have no plain default: the engine fills them in
  for (const k of searchedKeys()) {
    const v = p[k];
    if (v === undefined || v === null || (mine[k] ?? plainDefault(`plan.${k}`)) === v) continue;
    // (A key with a plain default that differs is set: left out of the probe, it would give the
    // keys that depend on it the default's values.)
    if (mine[k] === undefined && plainDefault(`plan.${k}`) === undefined) leftOut.push(k);
    mine[k] = v;
  }
  delete mine.dp;
  if (leftOut.length) {
    const probe = structuredClone(next);
    for (const k of leftOut) delete probe.plan[k];
    const r = await engine.resolve(JSON.stringify(probe));
    if (JSON.stringify(state.scenario) !== before) return; // the form moved on meanwhile
    for (const k of leftOut) if (r.scenario?.plan[k] === p[k]) delete mine[k];
  }
  state.scenario = next;
  state.local.clear();
  state.lastChanged = null;
  notify();
}
