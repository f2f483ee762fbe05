// The module's bindings and their declarations (wasm/stepcast.d.ts, beside wasm/bindings.cpp):
// every function bindings.cpp registers is declared in the StepcastModule interface, with as many
// overloads as it registers, nothing else is declared there, and the built module has each.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { ROOT, loadWasm } from './common.mjs';

/** name -> how many times `re`'s first group names it in `text`. */
function counts(text, re) {
  const out = new Map();
  for (const m of text.matchAll(re)) out.set(m[1], (out.get(m[1]) ?? 0) + 1);
  return out;
}

const registered = counts(readFileSync(join(ROOT, 'wasm', 'bindings.cpp'), 'utf8'), /emscripten::function\("(\w+)"/g);
const types = readFileSync(join(ROOT, 'wasm', 'stepcast.d.ts'), 'utf8');
const body = /export interface StepcastModule \{([\s\S]*?)\n\}/.exec(types);
const declared = counts(body ? body[1] : '', /^ {2}(\w+)\(/gm);

test('every registered binding is declared, once per overload, and nothing else is', () => {
  assert.ok(body, 'wasm/stepcast.d.ts declares StepcastModule');
  assert.equal(registered.get('estimate'), 2, 'the pattern reads bindings.cpp (estimate has two overloads)');
  assert.ok(registered.size >= 19, `bindings.cpp registers its functions (${registered.size} found)`);
  assert.deepEqual(Object.fromEntries([...declared].sort()), Object.fromEntries([...registered].sort()));
});

test('the built module has every declared function', async () => {
  const engine = await loadWasm();
  for (const name of declared.keys()) assert.equal(typeof engine[name], 'function', name);
});
