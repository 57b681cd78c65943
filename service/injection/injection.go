// Package injection detects prompt injection in text that will reach a
// model or a user: instructions addressed to a model ("ignore previous
// instructions", role overrides, prompt leaks, fake system/tool turns), also
// when obfuscated with homoglyphs, fullwidth or mathematical letters,
// invisible or Unicode tag characters, combining marks, or base64.
//
// It flags; it never filters: a finding that quotes an instruction is also
// flagged, and callers keep the text and mark it. A Detector is immutable
// after New and safe for concurrent use.
package injection

import (
	"encoding/base64"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hit is one pattern found: how it was seen is Via: "plain" (in the text as
// written), "normalized" (only after folding obfuscation) or "base64".
type Hit struct {
	Pattern string
	Via     string
}

// Report is what scanning a text found.
type Report struct {
	Hits       []Hit
	Hidden     bool // invisible or tag characters
	Homoglyphs bool // look-alike letters mixed into Latin words
}

// Flagged reports whether an injection pattern was found.
func (r Report) Flagged() bool { return len(r.Hits) > 0 }

// Patterns returns the names of the patterns found, without repeats.
func (r Report) Patterns() []string {
	var out []string
	for _, h := range r.Hits {
		dup := false
		for _, p := range out {
			dup = dup || p == h.Pattern
		}
		if !dup {
			out = append(out, h.Pattern)
		}
	}
	return out
}

// Detector holds the compiled patterns.
type Detector struct {
	patterns   []namedPattern
	lookalikes map[rune]rune // read-only after New
}

// namedPattern is an injection pattern with literal hints: the regexp runs
// only when one hint occurs in the text, which keeps a 50,000-character
// field scan in the sub-millisecond range for ordinary text.
//
// A pattern marked oneLine cannot match across a line break (between its
// words it allows no "\n": literal spaces, [^.\n]) and each of its matches
// holds one of its hints, so it matches the text exactly when it matches
// one of the lines holding a hint (\b at a line's edge reads the same,
// "\n" not being a word character). It then runs on those lines only: a
// chat of many lines where "show" or "print" occurs costs a few short
// runs instead of one over the whole text.
type namedPattern struct {
	name    string
	hints   []string
	re      *regexp.Regexp
	oneLine bool
}

func (p namedPattern) match(norm string) bool {
	if !p.oneLine {
		for _, h := range p.hints {
			if strings.Contains(norm, h) {
				return p.re.MatchString(norm)
			}
		}
		return false
	}
	for _, h := range p.hints {
		for off := 0; off < len(norm); {
			i := strings.Index(norm[off:], h)
			if i < 0 {
				break
			}
			i += off
			start := strings.LastIndexByte(norm[:i], '\n') + 1
			end := len(norm)
			if j := strings.IndexByte(norm[i:], '\n'); j >= 0 {
				end = i + j
			}
			if p.re.MatchString(norm[start:end]) {
				return true
			}
			off = end + 1
		}
	}
	return false
}

// New compiles the patterns. Patterns run on normalised text: lower-case,
// zero-width and combining characters removed, homoglyphs and
// fullwidth/mathematical letters mapped to ASCII, horizontal whitespace
// collapsed.
func New() *Detector {
	p := func(name string, hints []string, expr string) namedPattern {
		return namedPattern{name: name, hints: hints, re: regexp.MustCompile(expr)}
	}
	line := func(name string, hints []string, expr string) namedPattern { // see namedPattern
		return namedPattern{name: name, hints: hints, re: regexp.MustCompile(expr), oneLine: true}
	}
	h := func(hints ...string) []string { return hints }
	return &Detector{
		patterns: []namedPattern{
			line("ignore_instructions", h("ignor", "disregard", "forget", "overrid", "bypass"), `\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(previous|prior|above|earlier|preceding|all|any|your|the|these|system|original|other)\b[^.\n]{0,40}?\b(instructions?|prompts?|rules?|directions?|guidelines?|directives?|context|constraints?)\b`),
			line("role_override", h("you are now", "from now on", "act as", "pretend", "roleplay", "your new"), `\byou are now\b|\bfrom now on,? you\b|\bact as (a|an|the|if)\b|\bpretend (to be|you are|that you)\b|\broleplay as\b|\byour new (role|persona|instructions?)\b`),
			p("new_instructions", h("new instruction", "new rule", "new system prompt", "updated instruction", "revised instruction"), `\bnew (instructions?|system prompt|rules?)\s*:|\b(updated|revised) instructions\s*:`),
			line("prompt_leak", h("reveal", "print", "show", "output", "repeat", "leak", "disclose", "dump"), `\b(reveal|print|show|output|repeat|leak|disclose|dump)\b[^.\n]{0,30}?\b(system prompt|your prompt|your (instructions|rules)|hidden instructions|api[ _-]?keys?|secrets?|credentials?)\b`),
			p("chat_markup", h("<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>", "system", "assistant"), `<\|(im_start|im_end|system|user|assistant|endoftext)\|>|\[/?inst\]|<</?sys>>|(?m)^\s*#{2,}\s*(system|instructions?)\b|(?m)^\s*(system|assistant)\s*:`),
			line("jailbreak", h("jailbr", "developer mode", "dan mode", "do anything now"), `\b(jailbreak|jailbroken|developer mode|dan mode|do anything now)\b`),
			p("vote_manipulation", h("approve"), `\b(you must|you should|always|unconditionally|automatically)\s+(approve|vote (yes|to approve|in favou?r))\b|\bapprove\b[^.\n]{0,30}?\bregardless\b`),
			p("exfiltration", h("http://", "https://"), `\b(send|post|upload|forward|exfiltrate|leak)\b[^\n]{0,60}?\b(to|at)\s+https?://`),
			line("concealment", h("do not "), `\bdo not (tell|inform|mention|reveal to|alert)\b[^.\n]{0,20}?\b(the )?(user|human|operator|anyone|platform)\b`),
			// Fake turns and tool traffic: tags and JSON messages that mimic
			// what a model's own context looks like.
			p("fake_tags", h("<", `"role"`), `</?\s*(system|system_prompt|instructions?|tool_calls?|tool_use|tool_result|function_calls?|function_results?|invoke|assistant|user)\b[^<>\n]{0,80}>|"role"\s*:\s*"(system|tool|developer)"`),
		},
		lookalikes: homoglyphTable(),
	}
}

// Normalize folds text the way patterns see it: lower-case, invisible and
// combining characters removed, look-alike letters mapped to ASCII,
// horizontal whitespace collapsed. Other word-level checks can reuse it.
func (d *Detector) Normalize(text string) string {
	norm, _, _ := d.normalize(text)
	return norm
}

// Scan looks for injections in text.
func (d *Detector) Scan(text string) Report {
	norm, hidden, homoglyphs := d.normalize(text)
	rep := Report{Hidden: hidden, Homoglyphs: homoglyphs}
	var plain string
	for _, p := range d.patterns {
		if !p.match(norm) {
			continue
		}
		// Rare path: say whether the plain text already matched or only its
		// normalised form (an obfuscation attempt).
		if plain == "" {
			plain = strings.ToLower(text)
		}
		via := "normalized"
		if p.match(plain) {
			via = "plain"
		}
		rep.Hits = append(rep.Hits, Hit{p.name, via})
	}
	rep.Hits = append(rep.Hits, d.scanBase64(text, 2)...)
	return rep
}

// maxBase64Candidates bounds the work one field can cause.
const maxBase64Candidates = 32

// scanBase64 decodes base64-looking runs and scans what decodes to text,
// recursing depth levels for base64 inside base64.
func (d *Detector) scanBase64(text string, depth int) []Hit {
	if depth == 0 {
		return nil
	}
	var hits []Hit
	seen := map[string]bool{}
	for _, cand := range base64Runs(text, maxBase64Candidates) {
		decoded, ok := decodeBase64Text(cand)
		if !ok {
			continue
		}
		norm, _, _ := d.normalize(decoded)
		for _, p := range d.patterns {
			if !seen[p.name] && p.match(norm) {
				seen[p.name] = true
				hits = append(hits, Hit{p.name, "base64"})
			}
		}
		for _, h := range d.scanBase64(decoded, depth-1) {
			if !seen[h.Pattern] {
				seen[h.Pattern] = true
				hits = append(hits, h)
			}
		}
	}
	return hits
}

// base64Runs returns up to max runs of at least 20 base64 characters (both
// alphabets), with their trailing padding.
func base64Runs(text string, max int) []string {
	isB64 := func(c byte) bool {
		return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
	}
	var runs []string
	for i := 0; i < len(text) && len(runs) < max; {
		if !isB64(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isB64(text[j]) {
			j++
		}
		end := j
		for end < len(text) && end-j < 2 && text[end] == '=' {
			end++
		}
		if j-i >= 20 {
			runs = append(runs, text[i:end])
		}
		i = end
	}
	return runs
}

// decodeBase64Text decodes s in any of the four common alphabets and
// reports whether the result looks like text worth scanning.
func decodeBase64Text(s string) (string, bool) {
	trimmed := strings.TrimRight(s, "=")
	var b []byte
	var err error
	if strings.ContainsAny(trimmed, "-_") {
		b, err = base64.RawURLEncoding.DecodeString(trimmed)
	} else {
		b, err = base64.RawStdEncoding.DecodeString(trimmed)
	}
	if err != nil || len(b) < 8 || !utf8.Valid(b) {
		return "", false
	}
	printable := 0
	total := 0
	for _, r := range string(b) {
		total++
		if unicode.IsPrint(r) || unicode.IsSpace(r) {
			printable++
		}
	}
	if printable*10 < total*9 {
		return "", false
	}
	return string(b), true
}

// normalize folds text for pattern matching and reports whether it
// contained invisible characters and whether look-alike letters were mixed
// into Latin words (a common way to slip "ignоre" past a filter).
func (d *Detector) normalize(s string) (norm string, hidden, homoglyphs bool) {
	var b strings.Builder
	b.Grow(len(s))
	lastSpace := false
	wordHasLatin, wordHasLookalike := false, false
	endWord := func() {
		if wordHasLatin && wordHasLookalike {
			homoglyphs = true
		}
		wordHasLatin, wordHasLookalike = false, false
	}
	for _, r := range s {
		if r < utf8.RuneSelf {
			// ASCII, nearly all text: no invisible, combining or
			// look-alike characters, so the checks below reduce to these.
			c := byte(r)
			switch {
			case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
				if !lastSpace {
					b.WriteByte(' ')
				}
				lastSpace = true
				endWord()
				continue
			case c|0x20 >= 'a' && c|0x20 <= 'z':
				wordHasLatin = true
				c |= 0x20
			case c < '0' || c > '9':
				endWord()
			}
			lastSpace = false
			b.WriteByte(c)
			continue
		}
		if r >= 0xE0020 && r <= 0xE007E {
			// Unicode tag characters spell ASCII invisibly ("ASCII
			// smuggling"): read them as the letters they encode.
			hidden = true
			r -= 0xE0000
		} else if isInvisible(r) {
			hidden = true
			continue
		}
		if unicode.Is(unicode.Mn, r) {
			continue // combining marks: "i̇gnore" reads as "ignore"
		}
		if r == '\t' || r == '\r' || r == '\f' || r == '\v' || (r != '\n' && unicode.IsSpace(r)) {
			if !lastSpace {
				b.WriteByte(' ')
			}
			lastSpace = true
			endWord()
			continue
		}
		lastSpace = false
		switch {
		case r < utf8.RuneSelf && unicode.IsLetter(r):
			wordHasLatin = true
		case !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.So, r):
			endWord()
		}
		if m, ok := d.foldLookalike(r); ok {
			if r >= utf8.RuneSelf {
				wordHasLookalike = true
			}
			r = m
		}
		b.WriteRune(unicode.ToLower(r))
	}
	endWord()
	return b.String(), hidden, homoglyphs
}

// isInvisible reports zero-width and other format characters (Unicode Cf:
// ZWSP, ZWNJ, ZWJ, word joiner, BOM, soft hyphen, bidi controls, tags...).
func isInvisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r == 0x034F || r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0
}

// foldLookalike maps a letter that renders like an ASCII letter to it:
// fullwidth forms, mathematical alphanumerics, and the Cyrillic and Greek
// letters commonly used as homoglyphs.
func (d *Detector) foldLookalike(r rune) (rune, bool) {
	switch {
	case r < utf8.RuneSelf:
		return r, false
	case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
		return r - 0xFEE0, true
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical letters: 13 alphabets of A-Z a-z
		i := (r - 0x1D400) % 52
		if i < 26 {
			return 'A' + i, true
		}
		return 'a' + i - 26, true
	case r >= 0x1D7CE && r <= 0x1D7FF: // mathematical digits: 5 sets of 0-9
		return '0' + (r-0x1D7CE)%10, true
	case r >= 0x24B6 && r <= 0x24CF: // circled capitals
		return 'A' + r - 0x24B6, true
	case r >= 0x24D0 && r <= 0x24E9: // circled small letters
		return 'a' + r - 0x24D0, true
	}
	if m, ok := d.lookalikes[r]; ok {
		return m, true
	}
	return r, false
}

func homoglyphTable() map[rune]rune {
	return map[rune]rune{
		// Cyrillic
		'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c',
		'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w',
		'һ': 'h', 'ӏ': 'l', 'ɡ': 'g',
		'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
		'У': 'Y', 'Х': 'X', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Ԁ': 'D', 'Ԛ': 'Q', 'Ԝ': 'W', 'Һ': 'H', 'Ӏ': 'I',
		// Greek
		'α': 'a', 'ο': 'o', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x', 'ε': 'e',
		'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
		'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
		// Latin look-alikes
		'ı': 'i', 'ȷ': 'j', 'ℓ': 'l', 'ǀ': 'l', 'ꞁ': 'l', 'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e',
		'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i', 'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p',
		'ʀ': 'r', 'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z',
	}
}
