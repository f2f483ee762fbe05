// The page's Content-Security-Policy, one definition for the built pages (a <meta> tag the build
// writes into every HTML page) and the bundled server (a header on every response).
//
// What the site needs and nothing more: its own scripts and the engine's worker, compiled
// WebAssembly ('wasm-unsafe-eval': the module is compiled from bytes, which CSP treats as eval;
// the module is built with -sDYNAMIC_EXECUTION=0, so Embind makes no `new Function`), its own
// style sheets (styles set through the CSSOM and constructed sheets are not inline styles), its
// own images plus data: and blob: URLs (the favicon, exported pictures), requests to itself (the
// service worker's cache) and to data: URLs (the module carries its WebAssembly as one, and
// Emscripten's loader fetches it), and a model's config.json from huggingface.co on a click. Inline <script> and <style> blocks of a page are allowed by
// their SHA-256 only, computed from the page itself. No plugins, no <base>, no form posts.
//
// frame-ancestors is honoured only in a header (browsers ignore it in <meta>): `*` on purpose, as
// `?embed=1` exists to be framed by documentation pages anywhere. The page never acts on a
// parent's behalf, so being framed costs nothing.

import { createHash } from 'node:crypto';

/** The policy's directives; `inlineScripts`, `inlineStyles`: 'sha256-...' sources. */
export function directives({ inlineScripts = [], inlineStyles = [], header = false } = {}) {
  const d = {
    'default-src': ["'none'"],
    'script-src': ["'self'", "'wasm-unsafe-eval'", ...inlineScripts],
    'worker-src': ["'self'"],
    'frame-src': ["'self'"], // the examples page frames the page (?embed=1)
    // huggingface.co: a model's config.json, fetched on the user's click on "Fetch" (Import), the
    // one request the page makes off its own origin (cards/hf_fetch.js; the footer says so).
    'connect-src': ["'self'", 'data:', 'https://huggingface.co'],
    'style-src': ["'self'", ...inlineStyles],
    'img-src': ["'self'", 'data:', 'blob:'],
    'font-src': ["'self'"],
    'manifest-src': ["'self'"],
    'object-src': ["'none'"],
    'base-uri': ["'none'"],
    'form-action': ["'none'"],
  };
  if (header) d['frame-ancestors'] = ['*'];
  return d;
}

/** The policy as one header or meta value. */
export function contentSecurityPolicy(options) {
  return Object.entries(directives(options)).map(([k, v]) => `${k} ${v.join(' ')}`).join('; ');
}

const sha256 = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The hashes of an HTML page's inline <script> and <style> blocks (not those with a src). */
export function inlineHashes(html) {
  const blocks = (tag) => [...html.matchAll(new RegExp(`<${tag}(\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, 'gi'))]
    .filter((m) => !/\ssrc\s*=/i.test(m[1] ?? ''))
    .map((m) => sha256(m[2]));
  return { inlineScripts: blocks('script'), inlineStyles: blocks('style') };
}

/** The policy for one HTML page: as its <meta> (`header` false) or as the server's header. */
export function policyForHtml(html, { header = false } = {}) {
  return contentSecurityPolicy({ ...inlineHashes(html), header });
}

/** The page with its policy in <head>, after the charset and before anything that can run. */
export function withPolicyMeta(html) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policyForHtml(html)}">`;
  const after = /<meta charset=[^>]*>/i.test(html) ? /<meta charset=[^>]*>/i : /<head(\s[^>]*)?>/i;
  return html.replace(after, (tag) => `${tag}\n  ${meta}`);
}
