// Package wordnet reads Princeton WordNet 3.0 in its original database
// format (the files Debian's wordnet-base package installs under
// /usr/share/wordnet: index.POS, data.POS, POS.exc) to answer one
// question: which words mean the same as this one? Memory search uses it to
// find "physician" when the note says "doctor".
//
// The index files (6 MB) are read into memory when the dictionary is
// opened; synsets are read from the data files by offset on demand. WordNet
// is © Princeton University, under the WordNet 3.0 licence (a BSD-style
// licence that allows use and redistribution with its copyright notice; see
// the header of any of its files).
package wordnet

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// DefaultDir is where Debian and Ubuntu install WordNet (package wordnet-base).
const DefaultDir = "/usr/share/wordnet"

var posNames = [...]string{"noun", "verb", "adj", "adv"}

// WordNet is an open dictionary, safe for concurrent use.
type WordNet struct {
	idx   [4][]byte  // index.POS without its licence header
	lines [4][]int32 // start of each line in idx
	data  [4]*os.File
	exc   [4]map[string][]string // inflected form -> base forms
	infl  map[string][]string    // base form -> irregular inflections (all parts of speech)

	mu    sync.Mutex
	cache map[string][]Synonym
}

// Synonym is a word sharing a meaning with the one asked about. Sense is
// the rank of that meaning among the word's meanings of its part of speech
// (0 is the commonest, as WordNet orders them by frequency in its tagged
// corpus).
type Synonym struct {
	Word  string // lower case; multi-word expressions have spaces
	Sense int
}

// Open reads the dictionary in dir. It fails if any of the files is
// missing, so that a partial install is reported rather than half used.
func Open(dir string) (*WordNet, error) {
	wn := &WordNet{infl: map[string][]string{}, cache: map[string][]Synonym{}}
	for i, pos := range posNames {
		b, err := os.ReadFile(filepath.Join(dir, "index."+pos))
		if err != nil {
			wn.Close()
			return nil, fmt.Errorf("wordnet: %w", err)
		}
		// The licence header's lines start with two spaces and sort first.
		for len(b) > 0 && b[0] == ' ' {
			nl := bytes.IndexByte(b, '\n')
			if nl < 0 {
				b = nil
				break
			}
			b = b[nl+1:]
		}
		wn.idx[i] = b
		for off := 0; off < len(b); {
			wn.lines[i] = append(wn.lines[i], int32(off))
			nl := bytes.IndexByte(b[off:], '\n')
			if nl < 0 {
				break
			}
			off += nl + 1
		}
		if wn.data[i], err = os.Open(filepath.Join(dir, "data."+pos)); err != nil {
			wn.Close()
			return nil, fmt.Errorf("wordnet: %w", err)
		}
		wn.exc[i] = map[string][]string{}
		if b, err := os.ReadFile(filepath.Join(dir, pos+".exc")); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				f := strings.Fields(l)
				if len(f) < 2 {
					continue
				}
				wn.exc[i][f[0]] = f[1:]
				for _, base := range f[1:] {
					wn.infl[base] = append(wn.infl[base], f[0])
				}
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			wn.Close()
			return nil, fmt.Errorf("wordnet: %w", err)
		}
	}
	if len(wn.lines[0]) == 0 {
		wn.Close()
		return nil, fmt.Errorf("wordnet: %s holds no nouns", dir)
	}
	return wn, nil
}

// Close releases the data files.
func (wn *WordNet) Close() error {
	for _, f := range wn.data {
		if f != nil {
			f.Close()
		}
	}
	return nil
}

// Inflections returns the irregular forms of a base form ("buy" ->
// "bought"); regular ones are left to a stemmer.
func (wn *WordNet) Inflections(base string) []string { return wn.infl[base] }

// Synonyms returns the words sharing one of the first maxSenses meanings of
// each part of speech of word (or of its base form: "relocated" is looked
// up as "relocate", "mice" as "mouse"), without the word itself, each once
// at its best sense rank, best first. The base forms themselves come first
// with Sense -1 when they differ from word.
func (wn *WordNet) Synonyms(word string, maxSenses int) ([]Synonym, error) {
	word = strings.ToLower(strings.TrimSpace(word))
	key := word + "\x00" + strconv.Itoa(maxSenses)
	wn.mu.Lock()
	if c, ok := wn.cache[key]; ok {
		wn.mu.Unlock()
		return c, nil
	}
	wn.mu.Unlock()
	best := map[string]int{}
	for pos := range posNames {
		for _, base := range wn.morph(pos, word) {
			if base != word {
				best[base] = -1
			}
			offs := wn.lookup(pos, base)
			for sense, off := range offs[:min(maxSenses, len(offs))] {
				words, _, err := wn.synset(pos, off)
				if err != nil {
					return nil, err
				}
				for _, w := range words {
					if w == word {
						continue
					}
					if b, ok := best[w]; !ok || sense < b {
						best[w] = sense
					}
				}
			}
		}
	}
	out := make([]Synonym, 0, len(best))
	for w, s := range best {
		out = append(out, Synonym{w, s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Sense != out[j].Sense {
			return out[i].Sense < out[j].Sense
		}
		return out[i].Word < out[j].Word
	})
	wn.mu.Lock()
	if len(wn.cache) > 10000 {
		clear(wn.cache)
	}
	wn.cache[key] = out
	wn.mu.Unlock()
	return out, nil
}

// Hypernyms returns the words of the direct hypernyms of the first
// maxSenses meanings of word ("hound" -> "dog", "shoe" -> "footwear"), each
// once at its best sense rank, best first.
func (wn *WordNet) Hypernyms(word string, maxSenses int) ([]Synonym, error) {
	cs, err := wn.Concepts(word, maxSenses)
	if err != nil {
		return nil, err
	}
	best := map[string]int{}
	var order []string
	for _, c := range cs {
		if !c.Hyper {
			continue
		}
		off, err := strconv.ParseInt(c.ID[1:], 10, 64)
		if err != nil {
			continue
		}
		words, _, err := wn.synset(strings.IndexByte("nvar", c.ID[0]), off)
		if err != nil {
			return nil, err
		}
		for _, w := range words {
			if b, ok := best[w]; !ok {
				best[w] = c.Sense
				order = append(order, w)
			} else if c.Sense < b {
				best[w] = c.Sense
			}
		}
	}
	out := make([]Synonym, 0, len(order))
	for _, w := range order {
		out = append(out, Synonym{w, best[w]})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Sense < out[j].Sense })
	return out, nil
}

// Detachment rules of WordNet's morphy, per part of speech: suffix ->
// ending of the base form.
var rules = [4][][2]string{
	{{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	{{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	{{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
	{},
}

// morph returns the base forms of word in part of speech pos that WordNet
// knows: the word itself, its exceptions, and what the detachment rules
// make of it.
func (wn *WordNet) morph(pos int, word string) []string {
	var out []string
	add := func(w string) {
		for _, o := range out {
			if o == w {
				return
			}
		}
		if len(wn.lookup(pos, w)) > 0 {
			out = append(out, w)
		}
	}
	add(word)
	for _, b := range wn.exc[pos][word] {
		add(b)
	}
	for _, r := range rules[pos] {
		if strings.HasSuffix(word, r[0]) && len(word) > len(r[0])+1 {
			add(word[:len(word)-len(r[0])] + r[1])
		}
	}
	return out
}

// lookup finds lemma's synset offsets in index.POS (sorted by lemma, in
// byte order, with "_" for spaces).
func (wn *WordNet) lookup(pos int, lemma string) []int64 {
	key := strings.ReplaceAll(lemma, " ", "_") + " "
	idx, lines := wn.idx[pos], wn.lines[pos]
	i := sort.Search(len(lines), func(i int) bool {
		l := idx[lines[i]:]
		return string(l[:min(len(key), len(l))]) >= key
	})
	if i == len(lines) || !bytes.HasPrefix(idx[lines[i]:], []byte(key)) {
		return nil
	}
	end := len(idx)
	if i+1 < len(lines) {
		end = int(lines[i+1])
	}
	// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
	f := strings.Fields(string(idx[lines[i]:end]))
	if len(f) < 4 {
		return nil
	}
	n, err := strconv.Atoi(f[2])
	if err != nil || n <= 0 || n > len(f) {
		return nil
	}
	out := make([]int64, 0, n)
	for _, s := range f[len(f)-n:] {
		if off, err := strconv.ParseInt(s, 10, 64); err == nil {
			out = append(out, off)
		}
	}
	return out
}

// synset reads the words of the synset at off in data.POS and the
// synsets it points to as hypernyms ("physician" -> "medical
// practitioner").
func (wn *WordNet) synset(pos int, off int64) ([]string, []Concept, error) {
	buf := make([]byte, 4096)
	n, err := wn.data[pos].ReadAt(buf, off)
	if n == 0 && err != nil {
		return nil, nil, fmt.Errorf("wordnet: data.%s at %d: %w", posNames[pos], off, err)
	}
	buf = buf[:n]
	if nl := bytes.IndexByte(buf, '\n'); nl >= 0 {
		buf = buf[:nl]
	}
	// offset lex_filenum ss_type w_cnt word lex_id [word lex_id...] p_cnt
	// [ptr_symbol offset pos source/target...] ...
	f := strings.Fields(string(buf))
	if len(f) < 4 || f[0] != fmt.Sprintf("%08d", off) {
		return nil, nil, fmt.Errorf("wordnet: data.%s: no synset at %d", posNames[pos], off)
	}
	cnt, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || 4+2*int(cnt) > len(f) {
		return nil, nil, fmt.Errorf("wordnet: data.%s: bad synset at %d", posNames[pos], off)
	}
	words := make([]string, 0, cnt)
	for k := 0; k < int(cnt); k++ {
		w := f[4+2*k]
		if p := strings.IndexByte(w, '('); p > 0 { // adjective marker: "galore(ip)"
			w = w[:p]
		}
		words = append(words, strings.ToLower(strings.ReplaceAll(w, "_", " ")))
	}
	var hyper []Concept
	at := 4 + 2*int(cnt)
	if at < len(f) {
		pc, _ := strconv.Atoi(f[at])
		for k := 0; k < pc && at+4+4*k <= len(f); k++ {
			sym, offs, ps := f[at+1+4*k], f[at+2+4*k], f[at+3+4*k]
			if sym != "@" && sym != "@i" {
				continue
			}
			hyper = append(hyper, Concept{ID: string("nvar"[posIndex(ps)]) + offs})
		}
	}
	return words, hyper, nil
}

func posIndex(p string) int {
	switch p {
	case "v":
		return 1
	case "a", "s":
		return 2
	case "r":
		return 3
	}
	return 0
}

// Concept is a WordNet synset: ID is its part of speech and offset
// ("n10020890"), stable across runs for one WordNet version.
type Concept struct {
	ID    string
	Sense int  // rank of the meaning among the word's (0 commonest)
	Hyper bool // a hypernym of one of the word's meanings, not a meaning
}

// Concepts returns the meanings of word (or of its base forms) in each part
// of speech, the first maxSenses of each, followed by their direct
// hypernyms. Words that share a meaning share a concept: "physician" and
// "doctor" both have n10020890.
func (wn *WordNet) Concepts(word string, maxSenses int) ([]Concept, error) {
	word = strings.ToLower(strings.TrimSpace(word))
	var out, hyper []Concept
	seen := map[string]bool{}
	for pos := range posNames {
		for _, base := range wn.morph(pos, word) {
			offs := wn.lookup(pos, base)
			for sense, off := range offs[:min(maxSenses, len(offs))] {
				c := Concept{ID: string("nvar"[pos]) + fmt.Sprintf("%08d", off), Sense: sense}
				if seen[c.ID] {
					continue
				}
				seen[c.ID] = true
				out = append(out, c)
				_, hs, err := wn.synset(pos, off)
				if err != nil {
					return nil, err
				}
				for _, h := range hs {
					h.Sense, h.Hyper = sense, true
					hyper = append(hyper, h)
				}
			}
		}
	}
	for _, h := range hyper {
		if !seen[h.ID] {
			seen[h.ID] = true
			out = append(out, h)
		}
	}
	return out, nil
}
