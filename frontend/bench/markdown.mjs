// Worst render time of pathological Markdown (test/pathological.ts), as the
// window's parser runs it (src/mdparse.ts: the length and nesting limits,
// then marked 18), next to a baseline measured in the same run: marked 18
// alone on the same texts, without the limits (a throw counts as a failure,
// not a time). Run under node --jitless, as the window runs JavaScript
// without a JIT. Prints a Markdown section for docs/BENCHMARKS.md.
//
//   node --jitless bench/markdown.mjs [size]
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const size = Number(process.argv[2] ?? 8000);
const entry = `
export { parseMarkdown, unsafeMarkdown, MAX_MARKDOWN_CHARS, MAX_NESTING } from "./src/mdparse";
export { pathological } from "./test/pathological";
export { Marked } from "marked";
`;
const out = await build({
  stdin: { contents: entry, resolveDir: join(here, ".."), loader: "ts" },
  bundle: true, write: false, format: "esm", platform: "neutral", target: "es2022",
});
const m = await import("data:text/javascript;base64," + Buffer.from(out.outputFiles[0].text).toString("base64"));
const plain = new m.Marked({ gfm: true, breaks: true, async: false });
const time = (f) => {
  const t0 = performance.now();
  let err = "";
  try { f(); } catch (e) { err = e.constructor?.name ?? "error"; }
  return { ms: performance.now() - t0, err };
};
const rows = [];
for (const [name, text] of Object.entries(m.pathological(size))) {
  const ours = time(() => m.parseMarkdown(text));
  const base = text.length > 200_000 ? { ms: NaN, err: "skipped (1 MB)" } : time(() => plain.parse(text));
  rows.push({ name, len: text.length, ours, base, plain: m.unsafeMarkdown(text) !== "" });
}
const worst = rows.reduce((a, b) => (b.ours.ms > a.ours.ms ? b : a));
const worstBase = rows.filter((r) => !r.base.err).reduce((a, b) => (b.base.ms > a.base.ms ? b : a));
const fmt = (x) => (Number.isNaN(x) ? "—" : x.toFixed(1) + " ms");
console.log(`### Pathological Markdown (frontend/bench/markdown.mjs, node ${process.version} --jitless)\n`);
console.log(`${rows.length} patterns of about ${size} characters (test/pathological.ts), parsed as the window parses a reply (limits: ${m.MAX_MARKDOWN_CHARS} characters, ${m.MAX_NESTING} levels of nesting; past them escaped plain text), against marked 18 alone in the same run.\n`);
console.log(`| measure | value |`);
console.log(`|---|---|`);
console.log(`| worst render time, with the limits | ${fmt(worst.ours.ms)} (${worst.name}) |`);
console.log(`| baseline: worst time of marked 18 alone, same texts | ${fmt(worstBase.base.ms)} (${worstBase.name}) |`);
console.log(`| texts marked 18 alone fails on (throws) | ${rows.filter((r) => r.base.err && !r.base.err.startsWith("skipped")).map((r) => `${r.name} (${r.base.err})`).join(", ") || "none"} |`);
console.log(`| texts shown as plain text by the limits | ${rows.filter((r) => r.plain).length} of ${rows.length} |`);
console.log(`\n| pattern | characters | with the limits | marked 18 alone |`);
console.log(`|---|---|---|---|`);
for (const r of rows) console.log(`| ${r.name} | ${r.len} | ${fmt(r.ours.ms)}${r.plain ? " (plain)" : ""} | ${r.base.err ? r.base.err : fmt(r.base.ms)} |`);
console.log(`\nIn the window the parse runs in a Web Worker with a 3 s budget (src/offthread.ts): past it the worker is abandoned and the reply shown as plain text, so no reply blocks the window's thread. Command: \`cd frontend && node --jitless bench/markdown.mjs ${size}\`.`);
