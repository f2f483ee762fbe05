// Builds the static site into ../build/web: the page, its worker, the engine's WebAssembly module
// (build-wasm/wasm/stepcast.js and the stepcast.wasm beside it, copied in under content hashes),
// the embed script for documentation pages (stepcast-embed.js, a second entry), the example
// documentation page (examples/) and a service worker whose cache is versioned by a hash of every
// file it caches. Writes a brotli (.br) and a gzip (.gz) copy beside every text and wasm file for
// the static server (scripts/serve.mjs), and prints every asset's raw, gzip and brotli size.
//
// `vite build --mode package` (npm pack's prepack, scripts/pack-dist.mjs) builds the npm package
// instead, into web/dist: the element as an ES module (stepcast-calculator.js) with its classic
// loader (stepcast-embed.js), the engine as an ES module for Node and browsers (engine.js,
// src/engine/library.js), and the chunks, worker and WebAssembly they load, each located by
// `new URL(..., import.meta.url)`, which a documentation site's bundler follows and copies. No
// page, no service worker: the element's "Open in Stepcast" then needs its page attribute.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { minify } from 'terser';
import { defineConfig } from 'vite';
import { withPolicyMeta } from './scripts/csp.mjs';
import { COMPRESSED, compressAll } from './scripts/compress.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');
const outDir = resolve(root, 'build', 'web');
const wasmJs = resolve(process.env.STEPCAST_WASM ?? join(root, 'build-wasm', 'wasm', 'stepcast.js'));
const wasmBin = wasmJs.replace(/\.js$/, '.wasm');
// The tools module beside it (wasm/tool_bindings.cpp): imports, exports, calibration fits and the
// traffic matrix, which the worker loads on the first such request.
const toolsJs = join(dirname(wasmJs), 'stepcast-tools.js');
const toolsBin = toolsJs.replace(/\.js$/, '.wasm');
// A first visit downloads the page, then the service worker precaches the rest of the app from
// the HTTP cache: with brotli, which browsers ask for (Chromium over plain http too), it must stay
// under 300 KB (issue 12); the build fails above this. Gzip is printed beside it. The files of
// the documentation embed (the examples page, the <stepcast-calculator> loader, element and
// iframe calculator) are no part of the page: the service worker caches them when a documentation
// page first fetches them, and a first visit to the calculator never downloads them.
// The page's own code that no first paint needs (a card loaded on first use by a dynamic import:
// the traffic matrix, import and export) is no part of it either: the service worker caches it on
// the next visit, or when first fetched (sw.template.js). Found in the bundle (lazyChunks below),
// with the tools module (stepcast-tools.js and .wasm), which the worker loads on first use.
// The app's PNG icons (public/icon-*.png, 14 KB) neither: the browser fetches them from the
// manifest when it offers to install the page, and keeps its own copy once installed.
const BUDGET_BYTES = 300_000;
const lazy = new Set();
const onDemand = (path) => path.startsWith('examples/') || path === 'stepcast-embed.js' ||
  /^assets\/(embed|frame)-[\w-]+\.js$/.test(path) || /^icon-[\w-]+\.png$/.test(path) || lazy.has(path);

function listFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out.sort();
}

const glue = async (file) => (await minify(readFileSync(file, 'utf8'), { compress: { passes: 2 }, format: { comments: false } })).code;

/**
 * A plugin that answers `import ... from 'virtual:NAME'` with the code `load(context)` returns
 * (context: Rollup's plugin context), once the two modules are built.
 */
function virtualWasm(name, load) {
  const id = `virtual:${name}`;
  return {
    name,
    resolveId: (source) => (source === id ? '\0' + id : null),
    async load(loadId) {
      if (loadId !== '\0' + id) return null;
      for (const f of [wasmJs, wasmBin, toolsJs, toolsBin]) {
        if (!existsSync(f))
          this.error(`${f} is missing: build the WebAssembly module first ` +
            '(emcmake cmake -S . -B build-wasm -DCMAKE_BUILD_TYPE=Release && make -C build-wasm)');
        this.addWatchFile(f);
      }
      return load(this);
    },
  };
}

/**
 * `import { createStepcast, createStepcastTools, wasmUrl, toolsWasmUrl } from
 * 'virtual:stepcast-esm'`: the two modules' factories as ES module code (src/engine/library.js),
 * and their .wasm, emitted as hashed assets. Emscripten's glue is a classic script whose Node path
 * needs CommonJS (require, __dirname), which an ES module lacks: each runs inside a function whose
 * parameters hide process, require, module, exports and define, so the glue takes its generic path
 * in Node and browsers alike (no file system of its own, no UMD export) and library.js hands it the
 * instantiated .wasm (instantiateWasm).
 */
function stepcastEsm() {
  const wrap = (code, factory) => `export const ${factory} = /* @__PURE__ */ (function (process, require, module, exports, define, __dirname, __filename) {\n` +
    `${code}\nreturn ${factory};\n})();\n`;
  return virtualWasm('stepcast-esm', (rollup) => {
    const url = (name, file) => (rollup.meta.watchMode ? `new URL(${JSON.stringify('/@fs' + file)}, location.href).href`
      : `new URL(import.meta.ROLLUP_FILE_URL_${rollup.emitFile({ type: 'asset', name, source: readFileSync(file) })}, import.meta.url).href`);
    return wrap(readFileSync(wasmJs, 'utf8'), 'createStepcast') + wrap(readFileSync(toolsJs, 'utf8'), 'createStepcastTools') +
      `export const wasmUrl = ${url('stepcast.wasm', wasmBin)};\n` +
      `export const toolsWasmUrl = ${url('stepcast-tools.wasm', toolsBin)};\n`;
  });
}

/**
 * `import { scriptUrl, wasmUrl, wasmBytes, toolsScriptUrl, toolsWasmUrl } from
 * 'virtual:stepcast-wasm'`: the module's script and its .wasm, emitted as hashed assets, the
 * .wasm's size (the loading bar's total: the response's Content-Length is the compressed size),
 * and the tools module's script and .wasm.
 */
function stepcastWasm() {
  return virtualWasm('stepcast-wasm', async (rollup) => {
    const bytes = `export const wasmBytes = ${statSync(wasmBin).size};\n`;
    if (rollup.meta.watchMode)
      return `export const scriptUrl = ${JSON.stringify('/@fs' + wasmJs)};\n` +
        `export const wasmUrl = ${JSON.stringify('/@fs' + wasmBin)};\n` +
        `export const toolsScriptUrl = ${JSON.stringify('/@fs' + toolsJs)};\n` +
        `export const toolsWasmUrl = ${JSON.stringify('/@fs' + toolsBin)};\n` + bytes;
    const url = (name, source) => `new URL(import.meta.ROLLUP_FILE_URL_${
      rollup.emitFile({ type: 'asset', name, source })}, import.meta.url).href`;
    // Emscripten's glue keeps its local names (no Closure Compiler here): terser renames them
    // and compresses, as it does the page's own code (7,598 -> 6,702 bytes of brotli against
    // esbuild's minifier); its top-level names stay (the worker calls createStepcast), exported
    // names are strings.
    return `export const scriptUrl = ${url('stepcast.js', await glue(wasmJs))};\n` +
      `export const wasmUrl = ${url('stepcast.wasm', readFileSync(wasmBin))};\n` +
      `export const toolsScriptUrl = ${url('stepcast-tools.js', await glue(toolsJs))};\n` +
      `export const toolsWasmUrl = ${url('stepcast-tools.wasm', readFileSync(toolsBin))};\n` + bytes;
  });
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

function embedLoader(entryName = 'embed') {
  return {
    name: 'stepcast-embed-loader',
    generateBundle(_, bundle) {
      const entry = Object.values(bundle).find((c) => c.type === 'chunk' && c.isEntry && c.name === entryName);
      if (!entry) this.error('the embed entry (src/embed/element.js) is missing from the bundle');
      this.emitFile({ type: 'asset', fileName: 'stepcast-embed.js', source: EMBED_LOADER(entry.fileName) });
    },
    configureServer(server) {
      server.middlewares.use((req, res, next) => {
        if (!req.url?.startsWith('/stepcast-embed.js')) return next();
        res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
        res.end(EMBED_LOADER('src/embed/element.js'));
      });
    },
  };
}

/**
 * Writes each built page's Content-Security-Policy (scripts/csp.mjs) into it, then sw.js (cache
 * named after a hash of every file), then the compressed copies, and prints the sizes.
 */
function serviceWorkerAndReport() {
  return {
    name: 'stepcast-sw-and-report',
    apply: 'build',
    generateBundle(_, bundle) {
      // The chunks the page's entry imports only dynamically: every chunk reachable from it, less
      // those its static imports reach.
      const chunks = Object.values(bundle).filter((c) => c.type === 'chunk');
      const main = chunks.find((c) => c.isEntry && c.name === 'main');
      const reach = (from, keys) => {
        const seen = new Set();
        const walk = (file) => {
          if (seen.has(file)) return;
          seen.add(file);
          for (const k of keys) for (const next of bundle[file]?.[k] ?? []) walk(next);
        };
        walk(from);
        return seen;
      };
      const eager = reach(main.fileName, ['imports']);
      lazy.clear();
      for (const file of reach(main.fileName, ['imports', 'dynamicImports'])) if (!eager.has(file)) lazy.add(file);
      for (const asset of Object.values(bundle))
        if (asset.type === 'asset' && /^stepcast-tools\.(js|wasm)$/.test(asset.names?.[0] ?? asset.name ?? '')) lazy.add(asset.fileName);
    },
    closeBundle() {
      // The policy hashes the pages' inline blocks, so it is written last, into the final HTML.
      for (const page of listFiles(outDir).filter((f) => f.endsWith('.html')))
        writeFileSync(page, withPolicyMeta(readFileSync(page, 'utf8')));
      const files = listFiles(outDir).filter((f) => !f.endsWith('sw.js'));
      const hash = createHash('sha256');
      for (const f of files) hash.update(relative(outDir, f)).update(readFileSync(f));
      const version = hash.digest('hex').slice(0, 12);
      const paths = files.map((f) => relative(outDir, f).split('\\').join('/')).filter((p) => !onDemand(p));
      // A folder's index.html is cached once, as the folder (./, ./examples/): the address
      // pages are visited at; the service worker answers .../index.html from it.
      const urls = paths.map((p) => './' + (p === 'index.html' || p.endsWith('/index.html')
        ? p.slice(0, -'index.html'.length) : p));
      const template = readFileSync(join(here, 'src', 'app', 'sw.template.js'), 'utf8');
      writeFileSync(join(outDir, 'sw.js'), template
        .replace('__VERSION__', JSON.stringify(version))
        .replace('__ASSETS__', JSON.stringify(urls))
        .replace('__LATER__', JSON.stringify([...lazy].sort().map((p) => './' + p))));

      // Every file once, as served (the compressed copy where there is one; a file without one
      // travels raw): what a first visit downloads, page and precache together.
      const rows = compressAll(listFiles(outDir)).map((r) => ({ ...r, name: relative(outDir, r.file) }));
      const visit = rows.filter((r) => !onDemand(r.name.split('\\').join('/')));
      const sum = (k, of = visit) => of.reduce((a, r) => a + r[k], 0);
      const kb = (n) => (n / 1024).toFixed(1).padStart(8) + ' KiB';
      const width = Math.max(...rows.map((r) => r.name.length), 5);
      const lines = [`\nsite ${relative(process.cwd(), outDir) || '.'} (cache version ${version}; ` +
        `${COMPRESSED.join(' ')} files also as .br and .gz)`,
      `${'asset'.padEnd(width)} ${'raw'.padStart(12)} ${'gzip -9'.padStart(12)} ${'brotli 11'.padStart(12)}`];
      for (const r of rows) lines.push(`${r.name.padEnd(width)} ${kb(r.raw)} ${kb(r.gzip)} ${kb(r.brotli)}`);
      const br = sum('brotli');
      lines.push(`${'total'.padEnd(width)} ${kb(sum('raw', rows))} ${kb(sum('gzip', rows))} ${kb(sum('brotli', rows))}`,
        `first visit: ${br} bytes with brotli (${sum('gzip')} gzipped), ` +
        `${(100 * br / BUDGET_BYTES).toFixed(0)} % of the ${BUDGET_BYTES / 1000} KB budget; ` +
        `${sum('brotli', rows) - br} more on first use (the documentation embed, the tools module, cards loaded when opened)`);
      console.log(lines.join('\n'));
      if (br > BUDGET_BYTES)
        throw new Error(`a first visit is ${br} bytes with brotli, over the ${BUDGET_BYTES} byte budget`);
    },
  };
}

/**
 * The package's `new URL("assets/x.wasm", import.meta.url)` as `new URL("./assets/x.wasm", ...)`:
 * Rollup writes a file beside or below the chunk without "./", which a browser and Vite read as
 * relative, but a bundler may take a bare name for a package (webpack resolves `new URL()`'s
 * string as a request). After minification, so every chunk's final text.
 */
function explicitlyRelative() {
  return {
    name: 'stepcast-explicitly-relative',
    generateBundle(_, bundle) {
      for (const chunk of Object.values(bundle))
        if (chunk.type === 'chunk')
          chunk.code = chunk.code.replace(/new URL\((["'])(?![./]|[a-z][a-z\d+.-]*:)([^"']+)\1,(\s*)import\.meta\.url\)/g,
            (_m, q, path, space) => `new URL(${q}./${path}${q},${space}import.meta.url)`);
    },
  };
}

// Both builds minify alike. Terser, two passes: 1.7 KB of brotli less than esbuild's minifier on
// the first visit (measured at 300,073 against 298,381 bytes); a third pass saves nothing more.
const minifying = { minify: 'terser', terserOptions: { compress: { passes: 2 }, format: { comments: false } } };

// What both builds set alike: the browsers they target, the minifier, and no preload links,
// size report or inlined assets (the service worker and the package list every file by name).
const sharedBuild = {
  emptyOutDir: true, target: 'es2022', ...minifying, modulePreload: false, reportCompressedSize: false, assetsInlineLimit: 0,
};

/** The npm package (web/dist): see the top of this file. */
const packageConfig = {
  root: here,
  base: './',
  publicDir: false,
  plugins: [stepcastWasm(), stepcastEsm(), embedLoader('stepcast-calculator'), explicitlyRelative()],
  worker: { format: 'iife' },
  build: {
    outDir: join(here, 'dist'),
    ...sharedBuild,
    copyPublicDir: false,
    rollupOptions: {
      input: {
        'stepcast-calculator': join(here, 'src', 'embed', 'element.js'),
        engine: join(here, 'src', 'engine', 'library.js'),
      },
      // Fixed names for what package.json exports; hashed chunks and assets below them.
      output: { entryFileNames: '[name].js', chunkFileNames: 'assets/[name]-[hash].js', assetFileNames: 'assets/[name]-[hash][extname]' },
      preserveEntrySignatures: 'strict',
    },
  },
};

export default defineConfig(({ mode }) => (mode === 'package' ? packageConfig : {
  root: here,
  base: './',
  publicDir: 'public',
  plugins: [stepcastWasm(), embedLoader(), serviceWorkerAndReport()],
  worker: { format: 'iife' },
  build: {
    outDir,
    ...sharedBuild,
    rollupOptions: {
      input: {
        main: join(here, 'index.html'),
        embed: join(here, 'src', 'embed', 'element.js'),
        examples: join(here, 'examples', 'index.html'),
      },
      // Entries keep their exports (the embed entry has none, but must not be tree-shaken away).
      preserveEntrySignatures: 'allow-extension',
    },
  },
  server: { fs: { allow: [root] } },
}));
