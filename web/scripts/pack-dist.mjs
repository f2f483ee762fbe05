// `npm pack` (prepack): copies the built embed into dist/ so the package carries it. The embed is
// stepcast-embed.js (a fixed name: the one script a documentation page adds) and the hashed
// assets it loads relative to itself (its entry, shared chunks, the worker and the engine module).
// The TypeScript declarations live beside the bindings they declare (wasm/stepcast.d.ts) and go
// to types/. Build the site first (npm run build; STEPCAST_SITE names another build).
import { cpSync, existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const site = resolve(process.env.STEPCAST_SITE ?? join(web, '..', 'build', 'web'));
const dist = join(web, 'dist');
const types = join(web, 'types');
if (!existsSync(join(site, 'stepcast-embed.js'))) {
  console.error(`pack: ${site}/stepcast-embed.js is missing: run npm run build first`);
  process.exit(1);
}
rmSync(dist, { recursive: true, force: true });
cpSync(join(site, 'stepcast-embed.js'), join(dist, 'stepcast-embed.js'));
cpSync(join(site, 'assets'), join(dist, 'assets'), { recursive: true });
rmSync(types, { recursive: true, force: true });
cpSync(join(web, '..', 'wasm', 'stepcast.d.ts'), join(types, 'stepcast.d.ts'));
console.log(`pack: dist/ from ${site}, types/ from wasm/stepcast.d.ts`);
