// Numbers for people: every value leaves here with its unit.

const nf = (digits) => new Intl.NumberFormat('en-US', {
  maximumFractionDigits: digits, minimumFractionDigits: digits,
});
const fixed = [0, 1, 2, 3].map(nf);

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';
/** 1.23e30 -> "1.23×10³⁰": past 10^15 a row of digits says nothing a reader can take in. */
function scientific(x, significant = 3) {
  const [m, e] = x.toExponential(significant - 1).split('e');
  return `${m}×10${[...String(Number(e))].map((c) => (c === '-' ? '⁻' : SUPERSCRIPT[c])).join('')}`;
}
const HUGE = 1e15;

/** Three significant figures (at least 0 decimals), grouped thousands; past 10^15 "1.23×10³⁰". */
export function num(x, significant = 3) {
  if (!Number.isFinite(x)) return '–';
  if (x === 0) return '0';
  if (Math.abs(x) >= HUGE) return scientific(x, significant);
  const digits = Math.max(0, Math.min(3, significant - 1 - Math.floor(Math.log10(Math.abs(x)))));
  return fixed[digits].format(x);
}

/** A duration in seconds, in the unit that reads best. */
export function duration(s) {
  if (!Number.isFinite(s)) return '–';
  const a = Math.abs(s);
  if (a === 0) return '0 s';
  if (a < 1e-3) return `${num(s * 1e6)} µs`;
  if (a < 1) return `${num(s * 1e3)} ms`;
  if (a < 120) return `${num(s)} s`;
  if (a < 7200) return `${num(s / 60)} min`;
  if (a < 3 * 86400) return `${num(s / 3600)} h`;
  if (a < 2 * 365.25 * 86400) return `${num(s / 86400)} days`;
  return `${num(s / (365.25 * 86400))} years`;
}

/** Seconds with a fixed unit (for tables where values line up). */
export function seconds(s, unit = 's') {
  const scale = { s: 1, ms: 1e3, 'µs': 1e6 }[unit];
  return `${num(s * scale)} ${unit}`;
}

const SI = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
/** 57829 -> "57.8 k" + unit. */
export function si(x, unit) {
  if (!Number.isFinite(x)) return '–';
  for (const [scale, prefix] of SI)
    if (Math.abs(x) >= scale) return `${num(x / scale)} ${prefix}${unit}`;
  return `${num(x)} ${unit}`;
}

/** A count of things with a word: 70.6e9 -> "70.6 billion". */
export function count(x) {
  if (!Number.isFinite(x)) return '–';
  if (Math.abs(x) >= HUGE) return scientific(x);
  const words = [[1e12, 'trillion'], [1e9, 'billion'], [1e6, 'million']];
  for (const [scale, word] of words) if (Math.abs(x) >= scale) return `${num(x / scale)} ${word}`;
  return fixed[0].format(x);
}

export function integer(x) {
  return !Number.isFinite(x) ? '–' : Math.abs(x) >= HUGE ? scientific(x) : fixed[0].format(x);
}

const BIN = [[2 ** 40, 'TiB'], [2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB']];
export function bytes(x) {
  if (!Number.isFinite(x)) return '–';
  for (const [scale, unit] of BIN) if (Math.abs(x) >= scale) return `${num(x / scale)} ${unit}`;
  return `${fixed[0].format(x)} B`;
}

export function gib(x, digits = 1) {
  return `${fixed[digits].format(x / 2 ** 30)} GiB`;
}

export function percent(fraction, digits = 1) {
  return Number.isFinite(fraction) ? `${fixed[digits].format(100 * fraction)} %` : '–';
}

export function money(x) {
  if (!Number.isFinite(x)) return '–';
  if (Math.abs(x) >= HUGE) return `$${scientific(x)}`;
  if (Math.abs(x) >= 1e12) return `$${num(x / 1e12)} trillion`;
  if (Math.abs(x) >= 1e9) return `$${num(x / 1e9)} billion`;
  if (Math.abs(x) >= 1e6) return `$${num(x / 1e6)} million`;
  return `$${fixed[0].format(x)}`;
}

/** A rate of things per second: "57,829 tokens/s", "1.59 million tokens/s". */
export function rate(x, unit) {
  if (!Number.isFinite(x)) return '–';
  if (Math.abs(x) >= 1e9) return `${num(x / 1e9)} billion ${unit}`;
  if (Math.abs(x) >= 1e6) return `${num(x / 1e6)} million ${unit}`;
  return `${fixed[0].format(x)} ${unit}`;
}
