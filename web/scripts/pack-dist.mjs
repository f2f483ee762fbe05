// `npm pack` (prepack): builds what the npm package carries. dist/: `vite build --mode package`
// (vite.config.js: the element as an ES module and its classic loader, the engine as an ES module,
// and the chunks, worker and WebAssembly they locate by `new URL(..., import.meta.url)`), from the
// modules in build-wasm/ (STEPCAST_WASM names others). types/: the declarations, which live beside
// what they declare (wasm/stepcast.d.ts: the element and the module's bindings;
// src/engine/library.d.ts: the engine's ES module). custom-elements.json: written from the
// element's table (scripts/custom-elements.mjs). LICENSE: the repository's.
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { customElementsManifest } from './custom-elements.mjs';

const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
await build({ configFile: join(web, 'vite.config.js'), mode: 'package', logLevel: 'warn' });
const types = join(web, 'types');
rmSync(types, { recursive: true, force: true });
cpSync(join(web, '..', 'wasm', 'stepcast.d.ts'), join(types, 'stepcast.d.ts'));
cpSync(join(web, 'src', 'engine', 'library.d.ts'), join(types, 'engine.d.ts'));
writeFileSync(join(web, 'custom-elements.json'), `${JSON.stringify(customElementsManifest(), null, 2)}\n`);
cpSync(join(web, '..', 'LICENSE'), join(web, 'LICENSE'));
console.log('pack: dist/ (vite build --mode package), types/, custom-elements.json, LICENSE');
