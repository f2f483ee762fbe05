// Field builders and writers. A field: <div class=field data-path=...> with a label row (label and
// tooltip), the control (and its unit), a hint line, an error line (the engine's messages, one a
// line) and a line for the engine's hint of values that would do. Controls for scenario keys are
// built from the schema: label, type, unit, choices, range and doc (the tooltip where the page has
// no richer term).
import { $, h } from '../ui/dom.js';
import { choiceLabel, options } from '../scenario/schema.js';
import { tip } from '../ui/tooltip.js';
import { typedNumber } from '../ui/typed.js';

/** A labelled field around `control`. `term`: its tooltip, a term of ui/terms.js or {doc} (a schema key's). */
export function field(path, id, label, term, control, { unit, hint, cls } = {}) {
  const hintEl = hint !== undefined ? h('p', { class: 'hint', id: `f-${id}-hint` }, hint) : null;
  const described = [unit ? `f-${id}-unit` : null, hintEl ? `f-${id}-hint` : null].filter(Boolean);
  if (described.length) control.setAttribute('aria-describedby', described.join(' '));
  return h('div', { class: `field ${cls ?? ''}`, 'data-path': path },
    h('div', { class: 'label-row' }, h('label', { for: `f-${id}` }, label), tipFor(term, label)),
    h('div', { class: 'control' }, control, unit ? h('span', { class: 'unit', id: `f-${id}-unit` }, unit) : null),
    hintEl,
    errorLines(id));
}

/** The error line and the line for the engine's hint (hidden until there is a problem). */
export function errorLines(id) {
  return [h('p', { class: 'error', id: `f-${id}-error`, role: 'alert', hidden: true }),
    h('p', { class: 'fix', id: `f-${id}-fix`, hidden: true })];
}

function tipFor(term, label) {
  if (!term) return null;
  if (typeof term === 'string') return tip(term, label);
  return tip(null, label, term.doc);
}

/**
 * A number box: a text box (data-number) that reads numbers as people type them, "15T", "2k",
 * "1.5e12" (ui/typed.js; a browser's number box refuses a suffix); `integer` picks the phone's
 * keyboard.
 */
export function numberInput(id, { integer = true } = {}) {
  return h('input', {
    id: `f-${id}`, name: id, type: 'text', inputmode: integer ? 'numeric' : 'decimal', autocomplete: 'off',
    spellcheck: 'false', dataset: { number: '' },
  });
}

/** Whether a control is a number box (numberInput). */
export const isNumberBox = (el) => el?.dataset.number !== undefined;

export function selectInput(id, choices) {
  return h('select', { id: `f-${id}`, name: id }, choices.map(([value, text]) => h('option', { value }, text)));
}

export function checkField(path, id, label, term) {
  return h('div', { class: 'field check', 'data-path': path },
    h('div', { class: 'label-row' },
      h('input', { id: `f-${id}`, name: id, type: 'checkbox' }),
      h('label', { for: `f-${id}` }, label), tipFor(term, label)),
    errorLines(id));
}

export function radios(name, label, choices) {
  return h('div', { class: 'segmented', role: 'radiogroup', 'aria-label': label },
    choices.map(([value, text]) => h('label', null,
      h('input', { type: 'radio', name, value, id: `f-${name}-${value}` }), h('span', null, text))));
}

/** The tooltip of a schema key: the engine's doc of it (one text, the CLI's and docs/scenario.md's too). */
export const keyTerm = (k) => ({ doc: k.doc });

/**
 * The field of a schema key `k` (data-path `path`, control id f-`id`): a checkbox (boolean), a
 * menu (choices, or a short integer range), a text box (text) or a number box (integer, number;
 * its minimum and unit from the schema). `control` replaces the control (a menu of presets).
 */
export function keyField(k, path, id, { control, hint, cls, term = keyTerm(k), label = k.label || k.name } = {}) {
  if (k.type === 'boolean' && !control) return checkField(path, id, label, term);
  const values = options(k);
  let el = control;
  if (!el && values) el = selectInput(id, values.map((v) => [String(v), choiceLabel(v)]));
  if (!el && k.type === 'text') el = h('input', { id: `f-${id}`, name: id, type: 'text', autocomplete: 'off' });
  if (!el) {
    el = numberInput(id, { integer: k.type === 'integer' });
  }
  el.dataset.type = k.type;
  return field(path, id, label, term, el, { unit: control || values ? undefined : k.unit || undefined, hint, cls });
}

/** A control's value as the scenario holds it: a number, a boolean, or text ('' for none). */
export function valueOf(el) {
  if (el.type === 'checkbox') return el.checked;
  if (el.dataset.type === 'integer' || el.dataset.type === 'number') return el.value === '' ? '' : typedNumber(el.value);
  return el.value;
}

/**
 * What a number box holds: {value} (a number), {empty: true}, or {message} (text that is not a
 * number: "Enter a number.", or "Enter a value." when nothing is typed and a value is needed).
 */
export function readNumber(el, { optional = false } = {}) {
  const raw = el.value.trim();
  const value = typedNumber(raw);
  if (raw !== '' && Number.isFinite(value)) return { value };
  if (raw === '') return optional ? { empty: true } : { message: 'Enter a value.' };
  return { message: 'Enter a number (15T, 2k and 1.5e12 read as numbers too).' };
}

/**
 * Shows a value in a control, writing only when it differs (a write, even of the same value,
 * costs a style pass). A number box that holds the same number in other words ("08") is left.
 */
export function put(el, v) {
  if (!el) return;
  if (el.type === 'checkbox') {
    if (el.checked !== !!v) el.checked = !!v;
    return;
  }
  const text = v === undefined || v === null || (typeof v === 'number' && !Number.isFinite(v)) ? '' : String(v);
  if (isNumberBox(el) && text !== '' && el.value !== '' && typedNumber(el.value) === Number(text)) return;
  if (el.value !== text) el.value = text;
}

/** Sets text only when it changes. */
export function setText(el, text) {
  if (el && el.textContent !== text) el.textContent = text;
}

/** Shows or hides an element, touching it only when that changes. */
export function show(el, on) {
  if (el && el.hidden === on) el.hidden = !on;
}

/** The control of a field (its first input or menu). */
export const controlOf = (fieldEl) => $('input:not([type=checkbox]), select', fieldEl) ?? $('input', fieldEl);
