// Shared by the WebAssembly and browser suites: where the built artefacts are, how to run the
// native CLI, how to load the module, and a tolerant deep comparison of two reports.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = process.env.STEPCAST_CLI ?? join(ROOT, 'build', 'engine', 'stepcast');
export const WASM = process.env.STEPCAST_WASM ?? join(ROOT, 'build-wasm', 'wasm', 'stepcast.js');
export const SITE = process.env.STEPCAST_SITE ?? join(ROOT, 'build', 'web');
export const SCENARIO_DIR = join(ROOT, 'web', 'examples', 'scenarios');
export const LINK_FIXTURES = join(ROOT, 'tests', 'browser', 'fixtures');

/** The links of a fixture file (links-v0.txt, links-v1.txt): one fragment a line, // comments. */
export function linkFixtures(name) {
  return readFileSync(join(LINK_FIXTURES, name), 'utf8').split('\n').map((l) => l.trim())
    .filter((l) => l && !l.startsWith('//'));
}

export function requireBuilt(path, how) {
  if (!existsSync(path)) throw new Error(`${path} does not exist: ${how}`);
}

/** The example scenarios the page ships, as [file name, text]. */
export function exampleScenarios() {
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, readFileSync(join(SCENARIO_DIR, f), 'utf8')]);
}

/** The text of the example scenario whose file name contains `part`. */
export function exampleText(part) {
  const found = exampleScenarios().find(([f]) => f.includes(part));
  if (!found) throw new Error(`no example scenario named like ${part}`);
  return found[1];
}

/** The engine's message in one of the CLI's error lines: without "error: " and the hint after it. */
export function messageOf(line) {
  const message = line.replace(/^error: /, '').trim();
  const hint = message.indexOf(' (try: ');
  return hint < 0 ? message : message.slice(0, hint);
}

/** The CLI's one error line for an engine error ({message, hint?}): the hint, where there is one, after it. */
export function cliErrorLine(error) {
  return `error: ${error.hint ? `${error.message} (try: ${error.hint})` : error.message}`;
}

/** A scenario text with some of its plan keys replaced. */
export function withPlan(text, plan) {
  const s = JSON.parse(text);
  Object.assign(s.plan, plan);
  return JSON.stringify(s);
}

/**
 * Runs `stepcast estimate - --timeline` on a scenario text (the WebAssembly module always adds
 * the timeline; `timeline: false` leaves it out when only the numbers matter). Returns
 * {status, report, stderr}.
 */
export function cliEstimate(text, { timeline = true } = {}) {
  const r = spawnSync(CLI, ['estimate', '-', ...(timeline ? ['--timeline'] : [])],
    { input: text, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return {
    status: r.status,
    stderr: r.stderr,
    report: r.status === 0 ? JSON.parse(r.stdout) : undefined,
  };
}

/**
 * `stepcast link FILE [--base URL] [--tokens N] [--price P]` on a scenario text (written to a
 * temporary file). Returns {status, link, stderr}.
 */
export function cliLink(text, { base, tokens, price } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'stepcast-link-'));
  const file = join(dir, 'scenario.json');
  writeFileSync(file, text);
  try {
    const args = ['link', file];
    if (base !== undefined) args.push('--base', base);
    if (tokens !== undefined) args.push('--tokens', String(tokens));
    if (price !== undefined) args.push('--price', String(price));
    const r = spawnSync(CLI, args, { encoding: 'utf8' });
    if (r.error) throw r.error;
    return { status: r.status, link: r.stdout.trim(), stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `stepcast estimate --link URL [--timeline]`. Returns {status, report, stderr}. */
export function cliEstimateLink(url, { timeline = false } = {}) {
  const r = spawnSync(CLI, ['estimate', '--link', url, ...(timeline ? ['--timeline'] : [])],
    { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return { status: r.status, stderr: r.stderr, report: r.status === 0 ? JSON.parse(r.stdout) : undefined };
}

/**
 * `stepcast search - --top N --format json` on a scenario text. Returns {status, result, stderr}
 * (result: the parsed JSON).
 */
export function cliSearch(text, top = 10) {
  const r = spawnSync(CLI, ['search', '-', '--top', String(top), '--format', 'json'],
    { input: text, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return { status: r.status, stderr: r.stderr, result: r.status === 0 ? JSON.parse(r.stdout) : undefined };
}

/**
 * `stepcast resolve - --format json` on a scenario text: {status, resolved, errors, problems}
 * (problems: every problem as the engine's error object, {code, path, message, rule, values,
 * ...}, in the CLI's order; errors: their messages).
 */
export function cliResolve(text) {
  const r = spawnSync(CLI, ['resolve', '-', '--format', 'json'], { input: text, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  const out = r.stdout ? JSON.parse(r.stdout) : {};
  const problems = r.status === 0 ? [] : out.errors ?? [{ message: messageOf(r.stderr) }];
  return {
    status: r.status,
    resolved: r.status === 0 ? out : undefined,
    problems,
    errors: problems.map((e) => e.message),
  };
}

/** `stepcast scaling - --format json` on a scenario text: {status, result, stderr}. */
export function cliScaling(text) {
  const r = spawnSync(CLI, ['scaling', '-', '--format', 'json'], { input: text, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.error) throw r.error;
  return { status: r.status, stderr: r.stderr, result: r.status === 0 ? JSON.parse(r.stdout) : undefined };
}

export function cliRun(args) {
  const r = spawnSync(CLI, args, { encoding: 'utf8' });
  if (r.error) throw r.error;
  return r;
}

let modulePromise;
/** The .wasm beside the module's script (stepcast.js -> stepcast.wasm). */
export const WASM_BINARY = WASM.replace(/\.js$/, '.wasm');

/**
 * Instantiates the module through its UMD factory with the .wasm's bytes (Node 20 has fetch,
 * and the factory would try it on a file path). A fresh instance each call.
 */
export function instantiateWasm() {
  requireBuilt(WASM, 'build it with emcmake cmake -S . -B build-wasm && make -C build-wasm');
  requireBuilt(WASM_BINARY, 'build it with emcmake cmake -S . -B build-wasm && make -C build-wasm');
  const createStepcast = createRequire(import.meta.url)(WASM);
  return createStepcast({ wasmBinary: readFileSync(WASM_BINARY) });
}

/** The tools module beside it (stepcast-tools.js: imports, exports, calibration fits, traffic). */
export const TOOLS = join(dirname(WASM), 'stepcast-tools.js');

/** The tools module, a fresh instance, as instantiateWasm() loads the engine's. */
export function instantiateTools() {
  const binary = TOOLS.replace(/\.js$/, '.wasm');
  requireBuilt(TOOLS, 'build it with emcmake cmake -S . -B build-wasm && make -C build-wasm');
  requireBuilt(binary, 'build it with emcmake cmake -S . -B build-wasm && make -C build-wasm');
  const createStepcastTools = createRequire(import.meta.url)(TOOLS);
  return createStepcastTools({ wasmBinary: readFileSync(binary) });
}

/**
 * The WebAssembly modules as the page's worker answers from them, loaded once per process: the
 * engine's bindings, and the tools module's (web/src/engine/worker.js loads it on first use) for
 * every name the engine does not have.
 */
export function loadWasm() {
  modulePromise ??= Promise.all([instantiateWasm(), instantiateTools()]).then(([engine, tools]) =>
    new Proxy(engine, { get: (target, name) => (name in target ? target[name] : tools[name]) }));
  return modulePromise;
}

/**
 * Differences between two JSON values: the same keys, the same strings and booleans, numbers
 * equal to `rel` relative (or both within `abs` of zero). Returns a list of "path: why" lines
 * (at most `limit`).
 */
export function jsonDiff(expected, actual, { rel = 1e-9, abs = 1e-300, limit = 20 } = {}) {
  const out = [];
  const walk = (e, a, path) => {
    if (out.length >= limit) return;
    if (typeof e === 'number' && typeof a === 'number') {
      const scale = Math.max(Math.abs(e), Math.abs(a));
      if (!(Math.abs(e - a) <= rel * scale || Math.abs(e - a) <= abs))
        out.push(`${path}: expected ${e}, got ${a} (relative difference ${Math.abs(e - a) / scale})`);
      return;
    }
    if (Array.isArray(e) || Array.isArray(a)) {
      if (!Array.isArray(e) || !Array.isArray(a)) return void out.push(`${path}: array vs non-array`);
      if (e.length !== a.length) return void out.push(`${path}: length ${e.length} vs ${a.length}`);
      e.forEach((x, i) => walk(x, a[i], `${path}[${i}]`));
      return;
    }
    if (e && a && typeof e === 'object' && typeof a === 'object') {
      const ke = Object.keys(e).sort();
      const ka = Object.keys(a).sort();
      for (const k of ke) if (!(k in a)) out.push(`${path}.${k}: missing`);
      for (const k of ka) if (!(k in e)) out.push(`${path}.${k}: unexpected`);
      for (const k of ke) if (k in a) walk(e[k], a[k], `${path}.${k}`);
      return;
    }
    if (e !== a) out.push(`${path}: expected ${JSON.stringify(e)}, got ${JSON.stringify(a)}`);
  };
  walk(expected, actual, '$');
  return out;
}
