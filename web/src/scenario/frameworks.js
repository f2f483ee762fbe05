// Training-software profiles (presets().frameworks): each gives the plan flags a scenario leaves out
// (plan.framework picks one), with the source of each value and the flags it cannot do. The engine
// fills them in (resolve()); the page names the profile and shows its sources. Shared by the page's
// form and the <stepcast-calculator> element.
let list = [];

/** Takes the presets the worker read from the module (engine.ready()). */
export function setFrameworks(presets) {
  list = Array.isArray(presets?.frameworks) ? presets.frameworks : [];
}

/** The profile of id `id` ({id, name, about, plan: {key: {value, source}}, cannot: {key: why}}), or undefined. */
export const profile = (id) => list.find((f) => f.id === id);

/** A profile's name as a menu shows it: "Megatron-Core (NeMo, Megatron-Bridge performance recipes)". */
export const fullName = (id) => profile(id)?.name ?? String(id);

/** A profile's name in a sentence: "Megatron-Core", "DeepSpeed ZeRO" (the name without its parenthesis). */
export const shortName = (id) => fullName(id).replace(/\s*\(.*\)$/, '');

/** Whether plan key `name` is one a profile sets (a flag the framework fills in when left out). */
export const isFlag = (name) => list.some((f) => f.plan && Object.hasOwn(f.plan, name));

/** What profile `id` says about flag `name`: {value, source, cannot} (cannot: why it cannot do it, or undefined). */
export function setting(id, name) {
  const p = profile(id);
  const s = p?.plan?.[name];
  return { value: s?.value, source: s?.source ?? '', cannot: p?.cannot?.[name] };
}

/** A flag's value in words: "on", "off", or the value ("3"). */
export const valueWords = (v) => (v === true ? 'on' : v === false ? 'off' : v === undefined ? '–' : String(v));
