// Builds the static site into ../build/web: the page, its worker, the engine's WebAssembly module
// (build-wasm/wasm/stepcast.js, copied in under a content hash) and a service worker whose cache
// is versioned by a hash of every file it caches. Prints the gzipped size of every asset.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const outDir = resolve(root, 'build', 'web');
const wasmJs = resolve(process.env.STEPCAST_WASM ?? join(root, 'build-wasm', 'wasm', 'stepcast.js'));
// The whole site, gzipped, must stay well under 1 MB; the build fails above this.
const BUDGET_GZIP_BYTES = 1_000_000;

function listFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out.sort();
}

/** `import wasmUrl from 'virtual:stepcast-wasm'`: the module's URL, emitted as a hashed asset. */
function stepcastWasm() {
  const id = 'virtual:stepcast-wasm';
  return {
    name: 'stepcast-wasm',
    resolveId: (source) => (source === id ? '\0' + id : null),
    load(loadId) {
      if (loadId !== '\0' + id) return null;
      if (!existsSync(wasmJs))
        this.error(`${wasmJs} is missing: build the WebAssembly module first ` +
          '(emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release && make -C build-wasm)');
      this.addWatchFile(wasmJs);
      if (this.meta.watchMode) return `export default ${JSON.stringify('/@fs' + wasmJs)};`;
      const ref = this.emitFile({ type: 'asset', name: 'stepcast.js', source: readFileSync(wasmJs) });
      return `export default new URL(import.meta.ROLLUP_FILE_URL_${ref}, import.meta.url).href;`;
    },
  };
}

/** Writes sw.js (cache named after a hash of every file) and prints the gzipped sizes. */
function serviceWorkerAndReport() {
  return {
    name: 'stepcast-sw-and-report',
    apply: 'build',
    closeBundle() {
      const files = listFiles(outDir).filter((f) => !f.endsWith('sw.js'));
      const hash = createHash('sha256');
      for (const f of files) hash.update(relative(outDir, f)).update(readFileSync(f));
      const version = hash.digest('hex').slice(0, 12);
      const urls = ['./', ...files.map((f) => './' + relative(outDir, f).split('\\').join('/'))];
      const template = readFileSync(join(here, 'src', 'sw.template.js'), 'utf8');
      writeFileSync(join(outDir, 'sw.js'), template
        .replace('__VERSION__', JSON.stringify(version))
        .replace('__ASSETS__', JSON.stringify(urls)));

      const rows = listFiles(outDir).map((f) => {
        const data = readFileSync(f);
        return [relative(outDir, f), data.length, gzipSync(data, { level: 9 }).length];
      });
      const total = rows.reduce((a, r) => a + r[2], 0);
      const raw = rows.reduce((a, r) => a + r[1], 0);
      const kb = (n) => (n / 1024).toFixed(1).padStart(8) + ' KiB';
      const width = Math.max(...rows.map((r) => r[0].length), 5);
      const lines = [`\nsite ${relative(process.cwd(), outDir) || '.'} (cache version ${version})`,
        `${'asset'.padEnd(width)} ${'raw'.padStart(12)} ${'gzip -9'.padStart(12)}`];
      for (const [name, size, gz] of rows) lines.push(`${name.padEnd(width)} ${kb(size)} ${kb(gz)}`);
      lines.push(`${'total'.padEnd(width)} ${kb(raw)} ${kb(total)}  (${total} bytes gzipped, ` +
        `${(100 * total / BUDGET_GZIP_BYTES).toFixed(0)} % of the 1 MB budget)`);
      console.log(lines.join('\n'));
      if (total > BUDGET_GZIP_BYTES)
        throw new Error(`the site is ${total} bytes gzipped, over the ${BUDGET_GZIP_BYTES} byte budget`);
    },
  };
}

export default defineConfig({
  root: here,
  base: './',
  publicDir: 'public',
  plugins: [stepcastWasm(), serviceWorkerAndReport()],
  worker: { format: 'iife' },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: false,
    reportCompressedSize: false,
    assetsInlineLimit: 0,
  },
  server: { fs: { allow: [root] } },
});
