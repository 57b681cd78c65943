// Markdown documents for the renderer's tests: a corpus of hand-written
// ones and random ones made of lines whose meaning depends on their
// neighbours.
export const docs: Record<string, string> = {
  paragraphs: "First paragraph with a soft\nbreak and *emphasis over\ntwo lines*.\n\nSecond **bold** `code` [link](https://example.com/x).\n\n\nThird after two blank lines.",
  headings: "# Title\nText right under.\n## Sub\n\nSetext\n===\n\nAnother\n---\n\n---\n\nafter a rule",
  lists: "- one\n- two\n  - nested\n  - more\n- three\n\n1. first\n2. second\n\n7. starts at seven\n8. eight\n\n- loose\n\n- list\n\n  continued in the item\n\nnot in the list\n- [ ] task\n- [x] done",
  quotes: "> quoted\nlazy continuation\n> more\n\n> second quote\n\n>> nested\n\nout",
  code: "Intro:\n\n```go\nfunc main() {\n\n\tfmt.Println(\"<b>\")\n}\n```\n\n~~~\ntilde fence\n~~~\n\n    indented code\n    more\n\npara\n    not code (lazy)\n\n```python\nunclosed = True\n",
  tables: "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |\n\ntext\n\n| x |\n|---|\n| y |",
  thoughts: "<think>Plan: first\n\n- a\n- b\n\nthen more</think>\n\nThe **answer**\n\n- with\n- a list\n\nand `code`.",
  twoThoughts: "<think>one</think>between<think>two\n\nstill two</think>\n\nend",
  mixed: "## Steps\n\n1. Open the file\n2. Run:\n\n   ```sh\n   make test\n   ```\n\n3. Done\n\n> **Note**: it *works*.\n\n| k | v |\n|---|---|\n| a | 1 |\n\nBye.",
  escapes: "\\*not emphasis\\* and a\\\nhard break  \nand two-space break\n\n&amp; &lt;tag&gt; &#169;",
};

// Deterministic piece sizes (a model's deltas are a few characters each).
export function* pieces(text: string, seed: number, max: number): Generator<string> {
  let x = seed;
  for (let i = 0; i < text.length; ) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const n = 1 + (x % max);
    yield text.slice(0, i + n);
    i += n;
  }
}

// Line starts whose meaning depends on what follows or precedes them.
export const trickyLines = ["#", "# h", "#x", "-", "- a", "* b", "+", "1.", "1. one", "2. two", "3)", "10", ">", "> q", ">> qq", "```", "```js",
  "~~~", "    code", "  two-space", "| a | b |", "|---|---|", "| 1 |", "===", "---", "***", "- [ ] t", "text", "more *em", "em* end",
  "`code", "x  ", "", "", ""];

/** count random documents of 4 to 13 lines drawn from lines. */
export function randomDocs(count: number, seed: number, lines = trickyLines): string[] {
  let x = seed;
  const rnd = (n: number) => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x % n;
  };
  return Array.from({ length: count }, () => Array.from({ length: 4 + rnd(10) }, () => lines[rnd(lines.length)]).join("\n"));
}
