// Builds the static site into ../build/web: the page, its worker, the engine's WebAssembly module
// (build-wasm/wasm/stepcast.js, copied in under a content hash), the embed script for
// documentation pages (stepcast-embed.js, a second entry), the example documentation page
// (examples/) and a service worker whose cache is versioned by a hash of every file it caches.
// Prints the gzipped size of every asset.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { defineConfig } from 'vite';
import { withPolicyMeta } from './scripts/csp.mjs';

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

// stepcast-embed.js: the one classic script a documentation page adds. It stays at a fixed
// address (no hash) and loads the embed entry, which has a hash and shares the page's chunks
// (engine handle, formats), by a dynamic import relative to wherever the script was loaded from.
const EMBED_LOADER = (entry) => `/* Stepcast embed: <script src=".../stepcast-embed.js"></script> then
   <stepcast-calculator scenario="v=1&model=..." controls="tp,pp,micro_batch" compact></stepcast-calculator> */
(function () {
  var s = document.currentScript || document.querySelector('script[src*="stepcast-embed"]');
  import(new URL(${JSON.stringify(entry)}, (s && s.src) || location.href).href)
    .catch(function (e) { console.error('stepcast-embed: ' + e); });
})();
`;

function embedLoader() {
  return {
    name: 'stepcast-embed-loader',
    generateBundle(_, bundle) {
      const entry = Object.values(bundle).find((c) => c.type === 'chunk' && c.isEntry && c.name === 'embed');
      if (!entry) this.error('the embed entry (src/embed.js) is missing from the bundle');
      this.emitFile({ type: 'asset', fileName: 'stepcast-embed.js', source: EMBED_LOADER(entry.fileName) });
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        if (!req.url?.startsWith('/stepcast-embed.js')) return next();
        res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
        res.end(EMBED_LOADER('src/embed.js'));
      });
    },
  };
}

/**
 * Writes each built page's Content-Security-Policy (scripts/csp.mjs) into it, then sw.js (cache
 * named after a hash of every file), and prints the gzipped sizes.
 */
function serviceWorkerAndReport() {
  return {
    name: 'stepcast-sw-and-report',
    apply: 'build',
    closeBundle() {
      // The policy hashes the pages' inline blocks, so it is written last, into the final HTML.
      for (const page of listFiles(outDir).filter((f) => f.endsWith('.html')))
        writeFileSync(page, withPolicyMeta(readFileSync(page, 'utf8')));
      const files = listFiles(outDir).filter((f) => !f.endsWith('sw.js'));
      const hash = createHash('sha256');
      for (const f of files) hash.update(relative(outDir, f)).update(readFileSync(f));
      const version = hash.digest('hex').slice(0, 12);
      const paths = files.map((f) => relative(outDir, f).split('\\').join('/'));
      // A folder's index.html is also asked for as the folder itself (./, ./examples/).
      const folders = paths.filter((p) => p === 'index.html' || p.endsWith('/index.html'))
        .map((p) => './' + p.slice(0, -'index.html'.length));
      const urls = [...folders, ...paths.map((p) => './' + p)];
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
  plugins: [stepcastWasm(), embedLoader(), serviceWorkerAndReport()],
  worker: { format: 'iife' },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: false,
    reportCompressedSize: false,
    assetsInlineLimit: 0,
    rollupOptions: {
      input: {
        main: join(here, 'index.html'),
        embed: join(here, 'src', 'embed.js'),
        examples: join(here, 'examples', 'index.html'),
      },
      // Entries keep their exports (the embed entry has none, but must not be tree-shaken away).
      preserveEntrySignatures: 'allow-extension',
    },
  },
  server: { fs: { allow: [root] } },
});
