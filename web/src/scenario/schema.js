// The engine's description of every scenario key (the module's schema(): path, type, range or
// choices, default, unit, label, one-line doc and the page control that shows it). The page's form
// and the embed build their controls from it and never restate a default: a key left out of a
// scenario is the engine's to default, and resolve() says what it became.
let byPath = new Map();
let all = [];
let search = null;
let calibrationBounds = null;
// The keys grouped by object and by control, once: the form asks for them at every render (a
// filter of every key each time cost the page's load 33 ms of its main thread).
let byObject = new Map();
let byControl = new Map();

/** `items` grouped by `by(item)`, in their order. */
function group(items, by) {
  const out = new Map();
  for (const k of items) {
    const name = by(k);
    if (!out.has(name)) out.set(name, []);
    out.get(name).push(k);
  }
  return out;
}

/** Takes the schema the worker read from the module (engine.ready()). */
export function setSchema(schema) {
  all = schema?.keys ?? [];
  byPath = new Map(all.map((k) => [k.path, k]));
  byObject = group(all, (k) => k.object);
  byControl = group(all, (k) => k.control);
  search = schema?.search ?? null;
  calibrationBounds = schema?.calibration ?? null;
}

/** How far a measured run may be from its estimate, as the engine bounds it ({max_measured_over_predicted}: calibrate.h), or null. */
export const calibrationBound = () => calibrationBounds;

/** What the plan search varies and keeps, as the engine says it ({doc, varies, keeps, max_plans}), or null. */
export const searchSpace = () => search;

/** The key at a schema path ("plan.tp", "seq_len", "gpu.memory_gib", "plan.stages[].layers"), or undefined. */
export const key = (path) => byPath.get(path);

/** Every key of one object ("plan", "model", "gpu", "gpu.peak_tflops", ...), in the schema's order. */
export const keysOf = (object) => [...(byObject.get(object) ?? [])];

/** Every key the page shows in one place ("plan", "advanced", "model", "cluster", ...), in the schema's order. */
export const keysFor = (control) => [...(byControl.get(control) ?? [])];

/** A key's default when it is a plain value (not required, absent or a rule), else undefined. */
export function plainDefault(path) {
  const d = key(path)?.default;
  return d === null || d === 'required' || (typeof d === 'object' && d) ? undefined : d;
}

/** The rule a derived key follows, as the engine words it ("the slowest of the groups' own networks"), or ''. */
export function rule(path) {
  const d = key(path)?.default;
  return d && typeof d === 'object' && typeof d.rule === 'string' ? d.rule : '';
}

/**
 * Whether key `k` means something in scenario `s` (the scenario with its model as an object): the
 * schema's "needs" names the input it needs, a path ("model.moe": given) or a path and a value
 * ("model.attention.type=mla"; a value left out is the key's default). A key without one always does.
 */
export function applies(k, s) {
  if (!k?.needs) return true;
  const cut = k.needs.indexOf('=');
  const path = cut < 0 ? k.needs : k.needs.slice(0, cut);
  const given = path.split('.').reduce((o, p) => (o !== null && typeof o === 'object' ? o[p] : undefined), s);
  if (cut < 0) return given !== undefined && given !== null;
  return String(given ?? plainDefault(path)) === k.needs.slice(cut + 1);
}

/** The keys that mean something only with another input (their "needs"). */
export const conditional = () => all.filter((k) => k.needs);

/** Whether a scenario must give the key (no default at all). */
export const required = (path) => key(path)?.default === 'required';

// How the page writes a few choice values; any other (a choice the engine added, or a custom
// model's own text: a Map, so "constructor" is not Object's) shows as it is.
const CHOICE_LABELS = new Map(Object.entries({
  swiglu: 'SwiGLU', geglu: 'GeGLU', gelu: 'GeLU', relu: 'ReLU', squared_relu: 'squared ReLU',
  rope: 'RoPE / ALiBi', learned: 'learned', rmsnorm: 'RMSNorm', layernorm: 'LayerNorm',
  gqa: 'GQA', mla: 'MLA',
}));
export const choiceLabel = (value) => CHOICE_LABELS.get(value) ?? String(value);

/**
 * The values a control offers for a key: its choices, or every integer of a short range (the ZeRO
 * stage, 0 to 3), or null (a free number).
 */
export function options(k) {
  if (k.type === 'choice') return k.choices ?? [];
  if (k.type === 'integer' && k.max !== undefined && k.max - k.min <= 7)
    return Array.from({ length: k.max - k.min + 1 }, (_, i) => k.min + i);
  return null;
}
