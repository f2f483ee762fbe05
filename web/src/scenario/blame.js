// Which control an engine error belongs to. The engine names the key whose rule failed (path) and
// the other inputs the rule involves (related); the control to mark is the one the user can change
// to fix it, preferably the one just changed:
//   1. the control the user changed last, when the rule involves it (heads 50 marks Heads, though
//      the rule's path is model.hidden; nodes 7 marks Nodes, PP 5 marks PP);
//   2. else the control of the error's own path, when it can be edited (not a derived, read-only
//      field such as DP while it is derived);
//   3. else the first related input that has an editable control;
//   4. else the path itself (a field that shows the message, or the status line alone).
// Shared by the page's form and the <stepcast-calculator> element.

/**
 * The path to mark for `error` ({path, related}). `lastChanged`: the path the user changed last
 * (or null); `editable(path)`: whether a control the user can change holds that path;
 * `same(a, b)`: whether two paths name the same input (default: equal).
 */
export function blame(error, { lastChanged = null, editable, same = (a, b) => a === b }) {
  const path = error.path ?? '';
  const related = Array.isArray(error.related) ? error.related : [];
  if (lastChanged && [path, ...related].some((p) => same(p, lastChanged)) && editable(lastChanged)) return lastChanged;
  if (editable(path)) return path;
  return related.find((p) => editable(p)) ?? path;
}
