// A tiny static file server for the built site (no dependency): `node scripts/serve.mjs DIR PORT`
// serves DIR on http://localhost:PORT/ until interrupted. Also imported by the browser tests.
// Sends the build's precompressed copy of a file (FILE.br, FILE.gz: scripts/compress.mjs) when
// the request accepts its encoding, with Vary: Accept-Encoding so caches keep them apart.
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMPRESSED, ENCODINGS } from './compress.mjs';
import { policyForHtml } from './csp.mjs';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.png': 'image/png',
  '.wasm': 'application/wasm', '.webmanifest': 'application/manifest+json', '.txt': 'text/plain; charset=utf-8',
};

/**
 * The encoding to send, from an Accept-Encoding header and the encodings at hand (in order of
 * preference): the first one the header accepts (q above 0, by name or by `*`), else null (raw).
 */
export function pickEncoding(header, available) {
  const q = new Map();
  for (const part of String(header ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';').map((x) => x.trim());
    if (!name) continue;
    const qp = params.find((x) => x.startsWith('q='));
    const value = qp ? Number(qp.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  return available.find((e) => (q.get(e) ?? q.get('*') ?? 0) > 0) ?? null;
}

/** Starts serving `dir` on `port` (0: any free port). Resolves to the http.Server. */
export function serve(dir, port = 8080, host = '127.0.0.1') {
  const root = resolve(dir);
  const server = createServer((req, res) => {
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400).end();
      return;
    }
    let file = normalize(join(root, path));
    if (file !== root && !file.startsWith(root + sep)) {
      res.writeHead(403).end();
      return;
    }
    try {
      if (statSync(file).isDirectory()) file = join(file, 'index.html');
      statSync(file); // a missing file throws: 404 below
      const compressible = COMPRESSED.includes(extname(file));
      const encoding = compressible ? pickEncoding(req.headers['accept-encoding'],
        Object.keys(ENCODINGS).filter((e) => existsSync(file + ENCODINGS[e]))) : null;
      const body = encoding ? file + ENCODINGS[encoding] : file;
      const hashed = /[.-][A-Za-z0-9_-]{8,}\.(js|css|wasm)$/.test(file) && file.includes(`${sep}assets${sep}`);
      const st = statSync(body);
      // Revalidation (the no-cache files, and the service worker's precache of them) costs a 304.
      const etag = `"${st.size.toString(36)}-${Math.floor(st.mtimeMs).toString(36)}${encoding ? '-' + encoding : ''}"`;
      const headers = {
        'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
        'Content-Length': st.size,
        ETag: etag,
        'Cache-Control': hashed ? 'public, max-age=31536000, immutable' : 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
      };
      if (compressible) headers.Vary = 'Accept-Encoding';
      if (encoding) headers['Content-Encoding'] = encoding;
      // Pages carry the policy in a header too: the one place frame-ancestors counts. Scripts
      // carry it for the worker, whose policy is that of its own response.
      if (extname(file) === '.html') headers['Content-Security-Policy'] = policyForHtml(readFileSync(file, 'utf8'), { header: true });
      else if (extname(file) === '.js') headers['Content-Security-Policy'] = policyForHtml('', { header: true });
      const notModified = req.headers['if-none-match']?.split(',').some((t) => t.trim() === etag);
      if (notModified) delete headers['Content-Length'];
      // (setHeader, not writeHead's argument: whoever listens to the server can read them back.)
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      res.writeHead(notModified ? 304 : 200);
      if (notModified) {
        res.end();
        return;
      }
      if (req.method === 'HEAD') res.end();
      else createReadStream(body).pipe(res);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    }
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => ok(server));
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? '../build/web';
  const port = Number(process.argv[3] ?? 8080);
  try {
    statSync(join(dir, 'index.html'));
  } catch {
    console.error(`${resolve(dir)}/index.html is missing: run \`npm --prefix web run build\` first`);
    process.exit(1);
  }
  const server = await serve(dir, port, process.env.HOST ?? '127.0.0.1');
  console.log(`serving ${resolve(dir)} on http://localhost:${server.address().port}/ (Ctrl-C stops)`);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));
}
