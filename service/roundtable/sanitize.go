package roundtable

import (
	"jarvis/service/injection"
	"regexp"
	"strings"
	"unicode/utf8"
)

// scanner sanitises agent text: it cleans bytes, caps fields, parses
// evidence tags, and asks the injection detector about every string. It is
// built once per Engine (no package state) and is safe for concurrent use.
type scanner struct {
	maxField int
	det      *injection.Detector
	evidence *regexp.Regexp
}

func newScanner(maxField int) *scanner {
	return &scanner{
		maxField: maxField,
		det:      injection.New(),
		evidence: regexp.MustCompile(`(?i)\[\s*(VERIFIED|CORROBORATED|INDICATED|POSSIBLE)\s*(?::([^\]]*))?\]`),
	}
}

// textReport is what sanitising one string found.
type textReport struct {
	flags    []string
	patterns []injectionHit
}

type injectionHit = injection.Hit

// clean strips NUL and other control bytes (keeping tab, newline and
// carriage return), repairs invalid UTF-8, and cuts the string to the field
// limit at a rune boundary. It reports what it changed.
func (s *scanner) clean(in string) (string, []string) {
	var flags []string
	if !utf8.ValidString(in) {
		in = strings.ToValidUTF8(in, "\uFFFD")
		flags = append(flags, "invalid_utf8_repaired")
	}
	if strings.IndexFunc(in, isStrippedControl) >= 0 {
		in = strings.Map(func(r rune) rune {
			if isStrippedControl(r) {
				return -1
			}
			return r
		}, in)
		flags = append(flags, FlagNULStripped)
	}
	if cut, ok := truncateRunes(in, s.maxField); ok {
		in = cut
		flags = append(flags, FlagTruncated)
	}
	return in, flags
}

func isStrippedControl(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f
}

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) (string, bool) {
	if n <= 0 || len(s) <= n {
		return s, false // fewer bytes than n means fewer runes
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i], true
		}
		count++
	}
	return s, false
}

// scan sanitises a string and looks for injections and obfuscation. The
// returned string is the cleaned original (not the normalised form: the
// flag is informative and the content is kept as the agent wrote it).
func (s *scanner) scan(in string) (string, textReport) {
	out, flags := s.clean(in)
	rep := textReport{flags: flags}
	r := s.det.Scan(out)
	if r.Hidden {
		rep.flags = append(rep.flags, FlagHiddenCharacters)
	}
	if r.Homoglyphs {
		rep.flags = append(rep.flags, FlagHomoglyphs)
	}
	rep.patterns = r.Hits
	if r.Flagged() {
		rep.flags = append(rep.flags, FlagPromptInjection)
	}
	return out, rep
}

// evidenceInfo is the parsed evidence tag of an observation.
type evidenceInfo struct {
	level  EvidenceLevel
	source string
	flags  []string
}

// parseEvidence finds the first evidence tag. VERIFIED, CORROBORATED and
// INDICATED need a source; CORROBORATED needs two ("a + b") and is
// downgraded to INDICATED with one.
func (s *scanner) parseEvidence(ev string) evidenceInfo {
	if strings.TrimSpace(ev) == "" {
		return evidenceInfo{level: EvidenceNone, flags: []string{FlagNoEvidence}}
	}
	m := s.evidence.FindStringSubmatch(ev)
	if m == nil {
		return evidenceInfo{level: EvidenceNone, flags: []string{FlagNoEvidenceLevel}}
	}
	level := EvidenceLevel(strings.ToLower(m[1]))
	src := strings.TrimSpace(m[2])
	if level == EvidencePossible {
		return evidenceInfo{level: level, source: src}
	}
	if src == "" {
		return evidenceInfo{level: EvidenceNone, flags: []string{FlagMalformedEvidence}}
	}
	if level == EvidenceCorroborated {
		n := 0
		for _, part := range strings.FieldsFunc(src, func(r rune) bool { return r == '+' || r == ',' || r == ';' || r == '&' }) {
			if strings.TrimSpace(part) != "" {
				n++
			}
		}
		if n < 2 {
			return evidenceInfo{level: EvidenceIndicated, source: src, flags: []string{FlagMalformedEvidence}}
		}
	}
	return evidenceInfo{level: level, source: src}
}

// speculative reports whether the text hedges ("might", "I think",
// "could be"...). It works on words rather than a regexp: linear, and cheap
// on 50,000-character fields.
func (s *scanner) speculative(texts ...string) bool {
	for _, t := range texts {
		ws := words(s.det.Normalize(t))
		for i, w := range ws {
			switch w {
			case "might", "maybe", "possibly", "perhaps", "probably", "presumably", "potentially", "supposedly", "likely":
				return true
			}
			if i+1 == len(ws) {
				break
			}
			switch w + " " + ws[i+1] {
			case "may be", "may have", "i think", "i believe", "i guess", "i suspect", "i assume", "i feel",
				"could be", "could have", "could potentially", "it seems", "seems to", "seems like",
				"appears to", "not sure", "unclear whether":
				return true
			}
		}
	}
	return false
}

// Weights used to rank findings. An unsupported claim is not worthless, but
// it should not outrank a verified one of the same severity.
func evidenceWeight(l EvidenceLevel) float64 {
	switch l {
	case EvidenceVerified:
		return 1.0
	case EvidenceCorroborated:
		return 0.9
	case EvidenceIndicated:
		return 0.7
	case EvidencePossible:
		return 0.4
	default:
		return 0.25
	}
}

func severityWeight(s Severity) float64 {
	switch s {
	case SeverityCritical:
		return 1.0
	case SeverityWarning:
		return 0.6
	default:
		return 0.3
	}
}

const (
	speculationPenalty = 0.5
	injectionPenalty   = 0.5
)
