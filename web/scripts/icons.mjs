// The installed app's PNG icons (issue 37, "an installable app"), made from public/favicon.svg:
// Android and Chromium's install want 192 and 512 px bitmaps beside the SVG, and a maskable one
// (the launcher crops it to a circle or a squircle) whose drawing stays inside the middle 80 %
// (https://www.w3.org/TR/appmanifest/#icon-masks). Run by hand when the SVG changes; the PNGs are
// committed beside it (a build needs no browser):
//
//   node scripts/icons.mjs            (from web/; CHROMIUM=/path/to/chromium to use another)
//
// Debian's Chromium rasterises the SVG on a canvas (the browser's own renderer, anti-aliased);
// the pixels are written here as an indexed PNG (at most 256 colours: the drawing has four and
// their blended edges), so each icon is a few hundred bytes rather than Chromium's RGBA PNG.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const pub = join(here, '..', 'public');

/** The icons: file name in public/, size in pixels, whether it is the maskable one. */
export const ICONS = [
  { file: 'icon-192.png', size: 192, maskable: false },
  { file: 'icon-512.png', size: 512, maskable: false },
  { file: 'icon-maskable-512.png', size: 512, maskable: true },
];

/**
 * The maskable drawing of `svg` (favicon.svg): its background square to the edges (no rounded
 * corners: the launcher's mask makes its own), the rest scaled by 0.8 about the centre. The
 * drawing's farthest corner, (4, 7) of 32, is then 12 units from the centre, inside the safe
 * circle's 12.8 (40 % of 32).
 */
export function maskableSvg(svg) {
  const m = /^(<svg[^>]*>)<rect width="32" height="32" rx="[\d.]+" (fill="[^"]+")\/>(.*)<\/svg>\s*$/s.exec(svg);
  if (!m) throw new Error('favicon.svg no longer starts with its 32 × 32 rounded background: update maskableSvg()');
  return `${m[1]}<rect width="32" height="32" ${m[2]}/><g transform="translate(16 16) scale(0.8) translate(-16 -16)">${m[3]}</g></svg>`;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}

/**
 * A PNG of `rgba` (size × size, 4 bytes a pixel, not premultiplied): indexed with a transparency
 * chunk when it has at most 256 colours, else 8-bit RGBA; deflated at level 9.
 */
export function encodePng(rgba, size) {
  const colours = new Map(); // 0xRRGGBBAA -> index, in order of first appearance
  for (let i = 0; i < rgba.length && colours.size <= 256; i += 4) {
    const key = rgba.readUInt32BE(i);
    if (!colours.has(key)) colours.set(key, colours.size);
  }
  const indexed = colours.size <= 256;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header[8] = 8; // bit depth
  header[9] = indexed ? 3 : 6; // colour type: palette, or RGBA
  // Rows unfiltered: for these flat drawings, none deflates smallest (Sub, Up and Paeth, for
  // every row or chosen row by row, gave 2-17 % more).
  const stride = indexed ? size : 4 * size;
  const raw = Buffer.alloc((stride + 1) * size); // each row: its filter (0), then its bytes
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = 4 * (y * size + x);
      if (indexed) raw[y * (stride + 1) + 1 + x] = colours.get(rgba.readUInt32BE(i));
      else rgba.copy(raw, y * (stride + 1) + 1 + 4 * x, i, i + 4);
    }
  }
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header)];
  if (indexed) {
    const keys = [...colours.keys()];
    parts.push(chunk('PLTE', Buffer.from(keys.flatMap((k) => [k >>> 24, (k >>> 16) & 0xff, (k >>> 8) & 0xff]))));
    parts.push(chunk('tRNS', Buffer.from(keys.map((k) => k & 0xff))));
  }
  parts.push(chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** The data: URL of an SVG document's text. */
export const svgUrl = (svg) => `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;

/**
 * The image at `url` (a data: URL: the canvas stays readable) drawn on a size × size canvas of
 * `page` (playwright-core): its RGBA pixels, not premultiplied.
 */
export async function pixels(page, url, size) {
  const b64 = await page.evaluate(async ([src, n]) => {
    const img = new Image(n, n);
    img.src = src;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = n;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0, n, n);
    const px = ctx.getImageData(0, 0, n, n).data;
    let s = '';
    for (let i = 0; i < px.length; i += 0x8000) s += String.fromCharCode(...px.subarray(i, i + 0x8000));
    return btoa(s);
  }, [url, size]);
  return Buffer.from(b64, 'base64');
}

async function main() {
  const { chromium } = createRequire(join(here, '..', 'package.json'))('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage();
    const svg = readFileSync(join(pub, 'favicon.svg'), 'utf8');
    for (const icon of ICONS) {
      const png = encodePng(await pixels(page, svgUrl(icon.maskable ? maskableSvg(svg) : svg), icon.size), icon.size);
      writeFileSync(join(pub, icon.file), png);
      console.log(`${icon.file}: ${icon.size} × ${icon.size}, ${png.length} bytes`);
    }
  } finally {
    await browser.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
