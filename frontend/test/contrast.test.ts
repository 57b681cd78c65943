// The palette's contrast, computed from the CSS variables of style.css in
// both schemes (WCAG 2 relative luminance): body text, muted text on every
// background, and the text on coloured buttons and badges at least 4.5:1.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const css = readFileSync(resolve(__dirname, "../src/style.css"), "utf8");

function vars(block: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of block.matchAll(/--([\w-]+):\s*(#[0-9a-fA-F]{6})\s*;/g)) out[m[1]] = m[2];
  return out;
}

const light = vars(css.match(/:root\s*\{([^}]*)\}/)![1]);
const dark = { ...light, ...vars(css.match(/prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{([^}]*)\}/)![1]) };

function luminance(hex: string): number {
  const c = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}

export function ratio(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

// [text, background] pairs as the stylesheet uses them.
const pairs: [string, string][] = [
  ["fg", "bg"], ["fg", "bg2"], ["fg", "bg3"], ["fg", "user"], ["fg", "code"],
  ["muted", "bg"], ["muted", "bg2"],
  ["accent", "bg"], ["danger", "bg"],
  ["hl-keyword", "code"], ["hl-string", "code"], ["hl-comment", "code"], ["hl-number", "code"], ["hl-title", "code"],
  ["on-color", "accent"], ["on-color", "danger"], ["on-color", "ok"], ["on-color", "warn"],
];

describe("palette contrast (WCAG AA, 4.5:1)", () => {
  for (const [scheme, v] of [["light", light], ["dark", dark]] as const) {
    for (const [fg, bg] of pairs) {
      it(`${scheme}: --${fg} on --${bg}`, () => {
        expect(v[fg], `--${fg} is defined`).toMatch(/^#/);
        expect(v[bg], `--${bg} is defined`).toMatch(/^#/);
        expect(ratio(v[fg], v[bg])).toBeGreaterThanOrEqual(4.5);
      });
    }
  }

  it("coloured buttons and badges take their text colour from --on-color", () => {
    const coloured = css.split("\n").filter((l) => /background:\s*var\(--(accent|danger|ok|warn)\)/.test(l) && !/^\.status-dot/.test(l)); // dots carry no text
    expect(coloured.length).toBeGreaterThan(5);
    for (const l of coloured) expect(l, l).toMatch(/color:\s*var\(--on-color\)/);
  });
});
