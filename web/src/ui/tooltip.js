// Term tooltips: a small "?" button after a label; hovering or focusing it shows what the term
// means and its formula in one shared tooltip (Escape hides it). Touch: tapping toggles it.
import { h } from './dom.js';
import { TERMS } from './terms.js';

let bubble;
let owner = null; // the "?" button the tooltip is for
let keeper = null; // the element whose focus keeps it on show (the button, or the field "?" was pressed on)

function ensureBubble() {
  if (!bubble) {
    bubble = h('div', { id: 'tooltip', role: 'tooltip', class: 'tooltip', hidden: true });
    document.body.append(bubble);
  }
  return bubble;
}

function show(button, keptBy = button) {
  // A term's own text, unless the engine describes it (data-doc: the plan search's space).
  const [title, own, formula] = TERMS[button.dataset.term] ?? [button.dataset.title, '', ''];
  const text = button.dataset.doc ?? own;
  const tip = ensureBubble();
  // data-more: lines the page adds to a term (the training software's value and its source).
  const more = (button.dataset.more ?? '').split('\n').filter(Boolean);
  tip.replaceChildren(h('strong', null, title), h('span', null, ' ', text),
    ...(formula ? [h('code', { class: 'formula' }, formula)] : []),
    ...more.map((line) => h('span', { class: 'tip-more' }, line)));
  tip.hidden = false;
  owner = button;
  keeper = keptBy;
  button.setAttribute('aria-describedby', 'tooltip');
  const r = button.getBoundingClientRect();
  const w = Math.min(340, window.innerWidth - 16);
  tip.style.maxWidth = `${w}px`;
  const tw = tip.offsetWidth;
  const th = tip.offsetHeight;
  let left = Math.min(Math.max(8, r.left + r.width / 2 - tw / 2), window.innerWidth - tw - 8);
  let top = r.bottom + 6;
  if (top + th > window.innerHeight - 8 && r.top - th - 6 > 8) top = r.top - th - 6;
  tip.style.left = `${left + window.scrollX}px`;
  tip.style.top = `${top + window.scrollY}px`;
}

function hide() {
  if (!bubble || bubble.hidden) return;
  bubble.hidden = true;
  owner?.removeAttribute('aria-describedby');
  owner = null;
  keeper = null;
}

/**
 * A "?" button explaining `term` (a result, a key of TERMS); without a term, `label` and `doc`
 * (the engine's doc of a scenario key, from the schema). With both, the engine's `doc` is the text
 * and the term gives the title and the formula (the plan search).
 */
export function tip(term, label, doc) {
  if (term && !TERMS[term]) throw new Error(`no term ${term}`);
  if (!term && !doc) return null;
  const name = label ?? TERMS[term][0];
  return h('button', {
    type: 'button', class: 'tip', 'data-term': term ?? undefined, 'data-title': term ? undefined : name,
    'data-doc': doc ? doc.replaceAll('`', '') : undefined, 'aria-label': `What is ${name}?`,
    onmouseenter: (e) => show(e.currentTarget), onmouseleave: hide,
    onfocus: (e) => show(e.currentTarget), onblur: hide,
    onclick: (e) => (owner === e.currentTarget ? hide() : show(e.currentTarget)),
  }, '?');
}

const ARROWS = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };

/**
 * One Tab stop for the help of each card under `root`: its first "?" (the rest tabindex -1);
 * the arrow keys move between the "?" of a card. Kept as the cards re-render (a MutationObserver,
 * once a frame). Forty terms would otherwise be forty Tab stops.
 */
export function roveTips(root, card = '.card') {
  // The cards changed since the last frame (null: every card). Each edit re-renders several: going
  // over every card's "?" and writing every tabindex cost each edit's frame up to 20 ms (issue 39).
  let changed = null;
  let queued = false;
  const apply = () => {
    queued = false;
    const cards = changed ? [...changed] : root.querySelectorAll(card);
    changed = new Set();
    for (const c of cards) {
      c.querySelectorAll('.tip').forEach((b, i) => {
        const index = i === 0 ? 0 : -1;
        if (b.tabIndex !== index) b.tabIndex = index;
      });
    }
  };
  new MutationObserver((records) => {
    for (const r of records) {
      const c = r.target.closest?.(card);
      if (c) changed?.add(c);
      else changed = null; // above the cards (root itself): all of them
    }
    if (!queued) { queued = true; requestAnimationFrame(apply); }
  }).observe(root, { childList: true, subtree: true });
  apply();
  root.addEventListener('keydown', (e) => {
    const step = ARROWS[e.key];
    if (!step || !e.target.classList?.contains('tip')) return;
    const tips = [...(e.target.closest(card)?.querySelectorAll('.tip') ?? [])].filter((b) => b.offsetParent !== null);
    const next = tips[tips.indexOf(e.target) + step];
    if (next) {
      e.preventDefault();
      next.focus();
    }
  });
}

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') hide();
  // "?" on a field (not one that takes text; a number box takes none: "?" is no number): its term's help.
  const el = e.target;
  if (e.key === '?' && el instanceof Element && !(el.matches('input[type=text]:not([data-number]), input[type=search], textarea'))) {
    const button = el.closest('.field, .metric')?.querySelector('.tip');
    if (button && button !== el) {
      e.preventDefault();
      show(button, el); // hidden again when the field loses the focus, or on Escape
      el.addEventListener('blur', hide, { once: true });
    }
  }
});
// A scroll moves the page under a hover tooltip: hide it. But Tab scrolls the page to the button it
// focuses, right after the focus showed the tooltip: a keyboard user's tooltip follows its button.
// Captured: the form scrolls inside its own column too.
document.addEventListener('scroll', () => {
  if (keeper && keeper === document.activeElement) show(owner, keeper);
  else hide();
}, { capture: true, passive: true });
