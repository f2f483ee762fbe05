// A headline number of the Estimate and Cost cards: label and "?", the value large and its unit
// small, a line under it; the exact value in data-value (the browser tests compare it with the
// CLI's).
import { h } from '../ui/dom.js';
import { tip } from '../ui/tooltip.js';

/** A "?" with the term's formula worked out with this estimate's numbers under it. */
export function worked(button, text) {
  if (button && text) button.dataset.more = `Here: ${text}`;
  return button;
}

/** A headline number: `shown` is "12.3 s" (split at the first space into value and unit). */
export function metric(key, label, value, shown, sub, term = key, workedOut = '') {
  const cut = shown.indexOf(' ');
  const big = cut < 0 ? shown : shown.slice(0, cut);
  const unit = cut < 0 ? '' : shown.slice(cut + 1);
  // The formula with this estimate's numbers in it, under the formula itself.
  const help = worked(tip(term, label), workedOut);
  return h('div', { class: 'metric', 'data-metric': key, 'data-value': String(value) },
    h('div', { class: 'metric-label' }, label, help),
    h('div', { class: `metric-value${big.length > 6 ? ' long' : ''}` }, h('span', { class: 'metric-num' }, big),
      unit ? h('span', { class: 'metric-unit' }, ` ${unit}`) : null),
    sub ? h('div', { class: 'metric-sub' }, sub) : null);
}
