// Numbers as people type them: "15T" tokens, "2k" sequences, "1.5e12", "4,096". A count takes a
// suffix (k, M, B or G, T: thousand, million, billion, trillion; either case) or scientific
// notation; thousands may be grouped with commas or spaces. Decimal suffixes only: "8k" is 8,000
// (a sequence of 8,192 is typed 8192).
const SUFFIX = new Map([['k', 3], ['m', 6], ['b', 9], ['g', 9], ['t', 12]]);
const NUMBER = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:e([+-]?\d+))?([kmbgt])?$/i;
const GROUPED = /^[+-]?\d{1,3}(?:[, ]\d{3})+(?:\.\d*)?/;

/**
 * The number `text` says, or NaN when it says none. `suffixed`: whether it carried a suffix (a
 * field with a unit, tokens in billions, reads "15" as 15 billion and "15T" as 15 trillion).
 */
export function typed(text) {
  let t = String(text ?? '').trim();
  const grouped = GROUPED.exec(t);
  if (grouped) t = grouped[0].replace(/[, ]/g, '') + t.slice(grouped[0].length);
  t = t.replace(/\s+(?=[kmbgt]$)/i, ''); // "15 T"
  const m = NUMBER.exec(t);
  if (!m) return { value: NaN, suffixed: false };
  // Mantissa and exponent as one decimal literal: "1.3T" is 1.3e12 exactly, not 1.3 × 1e12.
  const exponent = Number(m[2] ?? 0) + (m[3] ? SUFFIX.get(m[3].toLowerCase()) : 0);
  return { value: Number(`${m[1]}e${exponent}`), suffixed: !!m[3] };
}

/** The number `text` says (typed()), or NaN. */
export const typedNumber = (text) => typed(text).value;

/** A count typed in `unit`s (tokens in billions: 1e9): "15" and "1.5e1" are 15 units, "15T" says its own. */
export function typedCount(text, unit) {
  const { value, suffixed } = typed(text);
  return suffixed ? value : value * unit;
}
