// The modules' bindings and their declarations (wasm/stepcast.d.ts, beside wasm/bindings.cpp):
// every function bindings.cpp registers is declared in the StepcastModule interface, and every
// one tool_bindings.cpp registers in StepcastToolsModule, with as many overloads as it
// registers, nothing else is declared there, and each built module has each of its own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { ROOT, instantiateTools, instantiateWasm } from './common.mjs';

/** name -> how many times `re`'s first group names it in `text`. */
function counts(text, re) {
  const out = new Map();
  for (const m of text.matchAll(re)) out.set(m[1], (out.get(m[1]) ?? 0) + 1);
  return out;
}

const types = readFileSync(join(ROOT, 'wasm', 'stepcast.d.ts'), 'utf8');
const registeredIn = (file) => counts(readFileSync(join(ROOT, 'wasm', file), 'utf8'), /emscripten::function\("(\w+)"/g);
const declaredIn = (name) => {
  const body = new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`).exec(types);
  return { body, names: counts(body ? body[1] : '', /^ {2}(\w+)\(/gm) };
};

const modules = [
  { file: 'bindings.cpp', name: 'StepcastModule', load: instantiateWasm },
  { file: 'tool_bindings.cpp', name: 'StepcastToolsModule', load: instantiateTools },
];

test('every registered binding is declared, once per overload, and nothing else is', () => {
  const engine = registeredIn('bindings.cpp');
  assert.equal(engine.get('estimate'), 2, 'the pattern reads bindings.cpp (estimate has two overloads)');
  assert.ok(engine.size >= 12, `bindings.cpp registers its functions (${engine.size} found)`);
  assert.ok(registeredIn('tool_bindings.cpp').size >= 8, 'tool_bindings.cpp registers its functions');
  for (const { file, name } of modules) {
    const { body, names } = declaredIn(name);
    assert.ok(body, `wasm/stepcast.d.ts declares ${name}`);
    assert.deepEqual(Object.fromEntries([...names].sort()), Object.fromEntries([...registeredIn(file)].sort()), name);
  }
});

test('each built module has every function its interface declares', async () => {
  for (const { name, load } of modules) {
    const module = await load();
    for (const f of declaredIn(name).names.keys()) assert.equal(typeof module[f], 'function', `${name}.${f}`);
  }
});

test('the two modules are one build', async () => {
  const [engine, tools] = await Promise.all([instantiateWasm(), instantiateTools()]);
  assert.equal(tools.version(), engine.version());
});
