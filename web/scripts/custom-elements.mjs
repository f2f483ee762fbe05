// The npm package's Custom Elements Manifest (schema 1.0.0, github.com/webcomponents/custom-elements-manifest):
// <stepcast-calculator>'s attributes, properties, event, CSS parts and custom properties, written
// from the one table the element itself reads (src/embed/surface.js), never kept by hand.
// `node scripts/custom-elements.mjs` writes web/custom-elements.json (prepack does: pack-dist.mjs).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ATTRIBUTES, CLASS_NAME, CSS_PROPERTIES, EVENTS, PARTS, PROPERTIES, SUMMARY, TAG,
} from '../src/embed/surface.js';

/** The module that defines the element, as the package lays it out (vite.config.js, --mode package). */
export const ELEMENT_MODULE = 'dist/stepcast-calculator.js';

export function customElementsManifest() {
  const field = (p) => ({ kind: 'field', name: p.name, type: { text: p.type }, description: p.description, readonly: true });
  return {
    schemaVersion: '1.0.0',
    readme: 'README.md',
    modules: [{
      kind: 'javascript-module',
      path: ELEMENT_MODULE,
      declarations: [{
        kind: 'class',
        name: CLASS_NAME,
        description: SUMMARY,
        customElement: true,
        tagName: TAG,
        superclass: { name: 'HTMLElement', package: 'global:' },
        attributes: ATTRIBUTES.map((a) => ({
          name: a.name, type: { text: a.type }, ...(a.default === undefined ? {} : { default: a.default }), description: a.description,
        })),
        members: PROPERTIES.map(field),
        events: EVENTS.map((e) => ({ name: e.name, type: { text: e.type }, description: e.description })),
        cssParts: PARTS.map((p) => ({ name: p.name, description: p.description })),
        cssProperties: CSS_PROPERTIES.map((p) => ({
          name: p.name, syntax: p.syntax, default: p.light,
          description: p.light === p.dark ? p.description : `${p.description} Dark default: ${p.dark}.`,
        })),
      }],
      exports: [
        { kind: 'js', name: CLASS_NAME, declaration: { name: CLASS_NAME, module: ELEMENT_MODULE } },
        { kind: 'custom-element-definition', name: TAG, declaration: { name: CLASS_NAME, module: ELEMENT_MODULE } },
      ],
    }],
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'custom-elements.json');
  writeFileSync(out, `${JSON.stringify(customElementsManifest(), null, 2)}\n`);
  console.log(`wrote ${out}`);
}
