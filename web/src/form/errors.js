// Problems next to the control that caused them: the engine's errors (every one resolve() returns,
// each at the control blame.js picks, with the engine's hint of values that would do) and the
// page's own "Enter a number" for a field whose text is not one.
import { $, $$, h } from '../ui/dom.js';
import { blame } from '../scenario/blame.js';
import { notify } from './bind.js';
import { controlOf, setText, show } from './fields.js';
import { edit, state } from './state.js';

// Paths whose control is elsewhere: a custom model's seq_len is the scenario's sequence length.
// A Map, not an object literal: an engine path comes from the scenario, and a top-level key
// named "toString" or "constructor" must not find Object.prototype's member.
const ALIASES = new Map([['model.seq_len', 'seq_len']]);

/** The page's path of an engine path: group 0 of a cluster of groups is the cluster form itself. */
export function formPath(path) {
  path = String(ALIASES.get(path) ?? path ?? '');
  return path.startsWith('cluster.groups[0].') ? `cluster.${path.slice('cluster.groups[0].'.length)}` : path;
}

/** The visible field (its wrapper) a JSON path belongs to: the longest data-path prefix of it. */
export function fieldFor(path) {
  if (!path) return null;
  path = formPath(path);
  let best = null;
  for (const el of $$('#inputs [data-path]')) {
    const p = el.dataset.path;
    if ((path === p || path.startsWith(p + '.') || path.startsWith(p + '[')) && el.offsetParent !== null &&
      (!best || p.length > best.dataset.path.length)) best = el;
  }
  return best;
}

/** Whether the user can change the input at `path` here: a visible field of its own, not read-only. */
function editable(path) {
  const el = fieldFor(path);
  if (!el || el.dataset.path !== formPath(path)) return false;
  if (el.classList.contains('whole')) return true;
  const control = controlOf(el);
  return !!control && !control.readOnly && !control.disabled;
}

const same = (a, b) => formPath(a) === formPath(b);

/** A field's own error lines (a map or a group holds fields with their own). */
const ownLines = (el) => ({ error: el.querySelector(':scope > .error'), fix: el.querySelector(':scope > .fix') });

function clear() {
  for (const el of $$('#inputs .field.invalid')) {
    el.classList.remove('invalid');
    const { error, fix } = ownLines(el);
    error.replaceChildren();
    show(error, false);
    if (fix) {
      setText(fix, '');
      show(fix, false);
    }
    for (const c of $$('input, select', el)) {
      c.removeAttribute('aria-invalid');
      const ids = (c.getAttribute('aria-describedby') ?? '').split(' ').filter((x) => x && x !== error.id);
      if (ids.length) c.setAttribute('aria-describedby', ids.join(' '));
      else c.removeAttribute('aria-describedby');
    }
  }
}

/** A button that sets what a hint proposes ({label, set: {path: value}}) and estimates again. */
const fixButton = ({ label, set }) => h('button', {
  type: 'button', class: 'link fix-apply',
  onclick: () => {
    for (const [path, value] of Object.entries(set)) edit(path, value);
    notify();
  },
}, label);

function mark(el, messages, hints, fixes = []) {
  el.classList.add('invalid');
  const { error, fix } = ownLines(el);
  // The engine's own words on hover: what the command line says, and what a bug report quotes.
  error.replaceChildren(...messages.map(({ text, engine }) => Object.assign(document.createElement('span'),
    { className: 'msg', textContent: text, title: engine && engine !== text ? `Engine: ${engine}` : '' })));
  show(error, true);
  if (fix) {
    setText(fix, hints.length ? `Try: ${hints.join('; ')}.` : '');
    for (const f of fixes) fix.append(' ', fixButton(f));
    show(fix, hints.length > 0 || fixes.length > 0);
  }
  // A whole map or group: the message is its own; no one control is wrong.
  const control = el.classList.contains('whole') ? null : controlOf(el);
  if (control) {
    control.setAttribute('aria-invalid', 'true');
    const ids = new Set((control.getAttribute('aria-describedby') ?? '').split(' ').filter(Boolean));
    ids.add(error.id);
    control.setAttribute('aria-describedby', [...ids].join(' '));
  }
}

/**
 * Shows `problems` ([{path, message, hint?, related?}]: the engine's, or the page's own) at their
 * controls, replacing what was shown. Returns the problems with the field each went to
 * ({...problem, field}; field null when no control has it).
 */
export function showProblems(problems) {
  clear();
  const byField = new Map();
  const placed = problems.map((p) => {
    const target = p.el ? p.el.closest('.field') : fieldFor(blame(p, { lastChanged: state.lastChanged, editable, same }));
    if (target) {
      if (!byField.has(target)) byField.set(target, { messages: [], hints: [], fixes: [] });
      const f = byField.get(target);
      if (!f.messages.some((m) => m.text === p.message)) f.messages.push({ text: p.message, engine: p.engine });
      const hint = p.hint?.replace(/\.$/, '');
      if (hint && !f.hints.includes(hint)) f.hints.push(hint);
      for (const x of p.fixes ?? []) if (!f.fixes.some((y) => y.label === x.label)) f.fixes.push(x);
    }
    return { ...p, field: target };
  });
  for (const [el, { messages, hints, fixes }] of byField) mark(el, messages, hints, fixes);
  return placed;
}
