// Markdown that has frozen or crashed Markdown parsers: the ReDoS and
// nesting patterns reported against marked, markdown-it, commonmark.js and
// others (unclosed link and image openers, nested brackets, emphasis and
// delimiter runs, deep quotes and lists, long tables, HTML and entity
// openers). Each is built at the size given; 8,000 characters took marked
// 15 over 15 seconds for repeated "[a](".
const r = (s: string, n: number) => s.repeat(Math.max(1, Math.floor(n)));

export function pathological(size = 8000): Record<string, string> {
  const k = (unit: string) => Math.floor(size / unit.length);
  return {
    "unclosed links [a](": r("[a](", k("[a](")),
    "unclosed links with spaces": r("[a]( ", k("[a]( ")),
    "unclosed images ![a](": r("![a](", k("![a](")),
    "nested brackets": r("[", size / 2) + "a" + r("]", size / 2),
    "nested links": r("[a", size / 4) + r("](b)", size / 8),
    "parentheses in a link": "[a](" + r("(", size / 2) + r(")", size / 2) + ")",
    "quote markers, 20,000": r(">", 20000) + " a",
    "quote markers with spaces": r("> ", k("> ")) + "a",
    "quotes one deeper a line": Array.from({ length: 200 }, (_, i) => r(">", i + 1) + " a").join("\n"),
    "deep list by indentation": Array.from({ length: 90 }, (_, i) => r(" ", 2 * i) + "- a").join("\n"),
    "list markers on one line": r("- ", k("- ")) + "a",
    "ordered markers on one line": r("1. ", k("1. ")) + "a",
    "emphasis openers": r("*a ", k("*a ") / 2) + r("a* ", k("a* ") / 2),
    "mixed emphasis": r("*_", size / 4) + "a" + r("_*", size / 4),
    "asterisk run": r("*", size) + "a",
    "underscore run": r("_", size) + "a",
    "backtick runs": r("`", size / 2) + "a" + r("``", size / 4),
    "tilde run": r("~", size) + "a",
    "angle brackets": r("<", size) + "a",
    "autolink openers": r("<a", k("<a")),
    "html openers": r("<div>", k("<div>")),
    "html comments": r("<!--", k("<!--")),
    "cdata openers": r("<![CDATA[", k("<![CDATA[")),
    "entity openers": r("&#", k("&#")),
    "escapes": r("\\", size),
    "wide table": "|" + r("a|", size / 6) + "\n|" + r("-|", size / 6) + "\n|" + r("b|", size / 6),
    "long table": "|a|b|\n|-|-|\n" + r("|x|y|\n", k("|x|y|\n")),
    "reference definition openers": r("[a]: <", k("[a]: <")),
    "setext paragraph": r("a\n", k("a\n")) + "=",
    "thematic break spaces": r("* ", k("* ")) + "\n",
    "link title quotes": "[a](b " + r('"', size),
    "fence openers": r("```\n", k("```\n")),
    "one long code span": "`" + r("a", size),
    "hard breaks": r("a  \n", k("a  \n")),
    "email-like": r("a@", k("a@")),
    "www links": r("www.a.", k("www.a.")),
    "over the length cap, 1 MB": r("a ", 500_000),
    "thought holding quotes": "<think>" + r(">", 20000) + "</think>fine",
  };
}
