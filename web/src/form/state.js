// The form's one source of truth: the scenario as the user set it (the engine's JSON form; a key
// left out is the engine's to default), plus what the engine made of it (resolve()'s answer) and
// the few things that are not the scenario: fields whose text is not a number yet (nothing is sent
// while one is), the control changed last (errors go to it), and layouts put aside while another
// is on show. Controls write here on input events; the form is rendered from here.

export const state = {
  /** What the user set: {model, cluster, plan, seq_len?, ...}. */
  scenario: null,
  /** resolve()'s answer for the scenario on show ({scenario, model, groups, gpus, micro_batches}), null while it has errors. */
  resolved: null,
  /** The estimate's iteration time of the scenario on show, in seconds (null while it has errors): measured runs are checked against it. */
  predicted_s: null,
  /** The engine's problems with the scenario on show ([{code, path, message, related?, hint?}]). */
  errors: [],
  /** Controls whose text is not a number: element -> {path, message}. */
  local: new Map(),
  /** The path of the input the user changed last (its engine path: "cluster.groups[0].nodes"). */
  lastChanged: null,
  /**
   * Layouts put aside: {stages, replicas} (a switch back brings them back), the first and last
   * stage's layers (firstLast, while a row per stage gives them), a node preset, a model preset.
   */
  stash: {},
};

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** "cluster.groups[1].nodes" -> ['cluster', 'groups', 1, 'nodes']. */
export function pathParts(path) {
  const out = [];
  for (const part of path.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return [path];
    if (m[1]) out.push(m[1]);
    for (const i of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(i[1]));
  }
  return out;
}

/** The value at `path` in `obj` (undefined when any step is missing). */
export function getIn(obj, path) {
  let v = obj;
  for (const p of pathParts(path)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[p];
  }
  return v;
}

/** Sets the value at `path` (creating objects on the way); undefined deletes the key. */
export function setIn(obj, path, value) {
  const parts = pathParts(path);
  let v = obj;
  for (let i = 0; i < parts.length - 1; i++) {
    if (!isObject(v[parts[i]]) && !Array.isArray(v[parts[i]])) {
      if (value === undefined) return;
      v[parts[i]] = typeof parts[i + 1] === 'number' ? [] : {};
    }
    v = v[parts[i]];
  }
  const last = parts[parts.length - 1];
  if (value === undefined) delete v[last];
  else v[last] = value;
}

/** The scenario's plan (created when missing). */
export function plan() {
  state.scenario.plan ??= {};
  return state.scenario.plan;
}

/** The cluster's groups as written: {groups: [...]} or the cluster itself as the one group. */
export function groups() {
  const c = state.scenario.cluster;
  return Array.isArray(c?.groups) ? c.groups : [c];
}

/** The engine path of a key of group `i` (group 0 of one group is the cluster itself). */
export function groupPath(i, name) {
  return Array.isArray(state.scenario.cluster?.groups) ? `cluster.groups[${i}].${name}` : `cluster.${name}`;
}

// Two keys that say one thing (the engine refuses them stated apart: rule optimizer_sharding):
// the one the user changes sets the other, which the plan then leaves to the engine.
const TWIN = { 'plan.zero_stage': 'plan.distributed_optimizer', 'plan.distributed_optimizer': 'plan.zero_stage' };

/** Sets a key the user changed, and remembers it as the last change. */
export function edit(path, value) {
  setIn(state.scenario, path, value);
  if (TWIN[path]) setIn(state.scenario, TWIN[path], undefined);
  state.lastChanged = path;
}

/** A field's text is not a number (`message`), or is again (null): nothing is sent while one is not. */
export function markLocal(el, path, message) {
  if (message) state.local.set(el, { path, message });
  else state.local.delete(el);
}

/** The local problems of controls still on show (hidden or replaced ones no longer count). */
export function localProblems() {
  for (const el of state.local.keys()) if (!el.isConnected || el.offsetParent === null) state.local.delete(el);
  return [...state.local.entries()].map(([el, p]) => ({ ...p, el }));
}

/** Starts over from a scenario (a copy is kept: the caller's object is never changed). */
export function reset(scenario) {
  state.scenario = structuredClone(scenario);
  state.resolved = null;
  state.predicted_s = null;
  state.errors = [];
  state.local.clear();
  state.lastChanged = null;
  state.stash = {};
}
