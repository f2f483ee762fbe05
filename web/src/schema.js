// The engine's description of every scenario key (the module's schema(): path, type, range or
// choices, default, unit, label, one-line doc and the page control that shows it). The page's form
// and the embed build their controls from it and never restate a default: a key left out of a
// scenario is the engine's to default, and resolve() says what it became.
let byPath = new Map();
let all = [];

/** Takes the schema the worker read from the module (engine.ready()). */
export function setSchema(schema) {
  all = schema?.keys ?? [];
  byPath = new Map(all.map((k) => [k.path, k]));
}

/** The key at a schema path ("plan.tp", "seq_len", "gpu.memory_gib", "plan.stages[].layers"), or undefined. */
export const key = (path) => byPath.get(path);

/** Every key of one object ("plan", "model", "gpu", "gpu.peak_tflops", ...), in the schema's order. */
export const keysOf = (object) => all.filter((k) => k.object === object);

/** Every key the page shows in one place ("plan", "advanced", "model", "cluster", ...), in the schema's order. */
export const keysFor = (control) => all.filter((k) => k.control === control);

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

/** Whether a scenario must give the key (no default at all). */
export const required = (path) => key(path)?.default === 'required';

// How the page writes a few choice values; any other (a choice the engine added) shows as it is.
const CHOICE_LABELS = {
  swiglu: 'SwiGLU', geglu: 'GeGLU', gelu: 'GeLU', relu: 'ReLU', squared_relu: 'squared ReLU',
  rope: 'RoPE / ALiBi', learned: 'learned', rmsnorm: 'RMSNorm', layernorm: 'LayerNorm',
};
export const choiceLabel = (value) => CHOICE_LABELS[value] ?? String(value);

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
