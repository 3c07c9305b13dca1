// Checks Mermaid diagrams with Mermaid's own parser (the `mermaid` package pinned in package.json).
//
// Input, on standard input: a JSON array of diagram texts (what goes between ```mermaid and ```).
// Output, on standard output: a JSON array with, for each diagram in order, {"ok": true, "type": "flowchart-v2"}
// or {"ok": false, "error": "Parse error on line 3: ..."}.
// Exit status: 0 when every diagram parses, 1 when one does not, 2 when the input is not an array of strings.
//
// `mermaid.parse` runs the diagram's grammar and fills its model (the flowchart's nodes and edges, the chart's
// series), as a browser would before drawing; labels go through DOMPurify, which needs a DOM: jsdom's.
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';

const { window } = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false, logLevel: 'fatal', securityLevel: 'strict' });

let diagrams;
try {
  diagrams = JSON.parse(readFileSync(0, 'utf8'));
} catch (error) {
  process.stderr.write(`parse.mjs: standard input is not JSON: ${error.message}\n`);
  process.exit(2);
}
if (!Array.isArray(diagrams) || !diagrams.every((text) => typeof text === 'string')) {
  process.stderr.write('parse.mjs: expected a JSON array of diagram texts\n');
  process.exit(2);
}

const results = [];
for (const text of diagrams) {
  try {
    const parsed = await mermaid.parse(text);
    results.push({ ok: true, type: parsed.diagramType });
  } catch (error) {
    results.push({ ok: false, error: String(error?.message ?? error) });
  }
}
process.stdout.write(JSON.stringify(results) + '\n');
process.exit(results.every((result) => result.ok) ? 0 : 1);
