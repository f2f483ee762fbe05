// The site's precompressed copies: FILE.br (brotli, quality 11) and FILE.gz (gzip -9) beside every
// text and wasm file of the build, written once at build time so the static server
// (serve.mjs) sends them without compressing anything per request.
import { readFileSync, writeFileSync } from 'node:fs';
import { extname } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** The extensions worth compressing (images other than SVG are compressed already). */
export const COMPRESSED = ['.html', '.js', '.mjs', '.css', '.json', '.svg', '.wasm', '.txt', '.webmanifest'];
/** The encodings the copies exist in, by the file name's suffix. */
export const ENCODINGS = { br: '.br', gzip: '.gz' };

/**
 * Writes the two copies of every file of `files` with a COMPRESSED extension (where smaller);
 * returns, for every file, {file, raw, gzip, brotli}: its sizes as served (raw without a copy).
 */
export function compressAll(files) {
  return files.filter((f) => !f.endsWith(ENCODINGS.br) && !f.endsWith(ENCODINGS.gzip)).map((file) => {
    const data = readFileSync(file);
    if (!COMPRESSED.includes(extname(file))) return { file, raw: data.length, gzip: data.length, brotli: data.length };
    const gz = gzipSync(data, { level: 9 });
    const br = brotliCompressSync(data, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
    });
    // A copy no smaller than the file (a tiny one) is left out: the file travels as it is.
    const keep = (suffix, packed) => {
      if (packed.length >= data.length) return data.length;
      writeFileSync(file + suffix, packed);
      return packed.length;
    };
    return { file, raw: data.length, gzip: keep(ENCODINGS.gzip, gz), brotli: keep(ENCODINGS.br, br) };
  });
}
