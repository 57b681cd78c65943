package memory

import (
	"strings"
	"sync"

	"jarvis/memory/wordnet"
)

// stopWords are English function words: in a question they carry almost no
// meaning ("where do I live now?"), yet they occur in most notes, so
// letting them match on their own makes short chatty notes win. The list is
// the common core of the usual IR stop lists (SMART, Lucene, NLTK), plus
// the question words.
const stopWords = " a about above after again against all am an and any are as at be because been before being below between " +
	"both but by can could did do does doing down during each few for from further had has have having he her " +
	"here hers herself him himself his how i if in into is it its itself just me more most much my myself no " +
	"nor not now of off on once only or other our ours ourselves out over own same she should so some such " +
	"than that the their theirs them themselves then there these they this those through to too under until " +
	"up very was we were what when where which while who whom why will with would you your yours yourself yourselves " +
	"s t don ll ve re d m "

// stopSet is stopWords as a set: IsStopWord is called for every word of
// every candidate line a search classifies.
var stopSet = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(stopWords) {
		m[w] = true
	}
	return m
}()

// IsStopWord reports whether w (lower case) is an English function word.
func IsStopWord(w string) bool {
	return stopSet[w]
}

// isPossessive: possessive determiners, stop words that still say whose
// fact is meant ("my dentist", not Ana's).
func isPossessive(w string) bool {
	switch w {
	case "my", "our", "your", "his", "her", "their":
		return true
	}
	return false
}

// stemPrefix shortens a lower-cased word to a prefix its inflected forms
// share ("moving" -> "mov", "works" -> "work"), for finding the line of a
// chunk a stemmed match came from. It is cruder than the index's Porter
// stemmer on purpose: a prefix only has to be contained in the forms.
func stemPrefix(w string) string {
	for _, suf := range []string{"ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ed", "es", "s", "e", "y"} {
		if len(w)-len(suf) >= 3 && strings.HasSuffix(w, suf) {
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// expansion is a word to search for as well as the user's, and how much it
// counts (the user's own words count 1).
type expansion struct {
	Text   string
	Weight float64
}

// Query expansion limits and weights. A synonym counts less than the
// user's word, and less the rarer the meaning it shares (WordNet orders a
// word's meanings by frequency).
const (
	maxSenses         = 3  // meanings per part of speech whose synonyms are used
	maxSynonyms       = 10 // per query word
	maxExpansionTotal = 48 // per query
	baseFormWeight    = 0.9
	hypernymWeight    = 0.2
)

var senseWeight = [maxSenses]float64{0.5, 0.35, 0.25}

// synonyms opens the WordNet dictionary on first use (12 ms); without one
// (not installed, or turned off) search matches the user's words only.
type synonyms struct {
	dir  string
	once sync.Once
	wn   *wordnet.WordNet
	err  error
}

func (sy *synonyms) get() *wordnet.WordNet {
	sy.once.Do(func() {
		if sy.dir != "-" {
			sy.wn, sy.err = wordnet.Open(sy.dir)
		}
	})
	return sy.wn
}

func (sy *synonyms) close() {
	sy.once.Do(func() {}) // a Store closed before its first search never opens it
	if sy.wn != nil {
		sy.wn.Close()
	}
}

// expand returns other words to search for in place of a query word: its
// base form if irregular ("bought" -> "buy"), its WordNet synonyms and
// their irregular forms ("purchase" -> "buy", "bought"). Regular endings are
// left to the index's Porter stemmer.
func (s *Store) expand(w string) []expansion {
	wn := s.syn.get()
	if wn == nil {
		return nil
	}
	syns, err := wn.Synonyms(w, maxSenses)
	if err != nil {
		s.log.Warn("memory synonyms", "word", w, "err", err)
		return nil
	}
	var out []expansion
	seen := map[string]bool{w: true}
	add := func(text string, weight float64) {
		if seen[text] || IsStopWord(text) || len(out) >= maxSynonyms {
			return
		}
		seen[text] = true
		out = append(out, expansion{text, weight})
	}
	for _, sy := range syns {
		weight := baseFormWeight
		if sy.Sense >= 0 {
			weight = senseWeight[min(sy.Sense, maxSenses-1)]
		}
		add(sy.Word, weight)
		for _, f := range wn.Inflections(sy.Word) {
			add(f, weight)
		}
	}
	// Broader words of the commonest meaning ("hound" -> "dog") count least.
	hyper, err := wn.Hypernyms(w, 1)
	if err != nil {
		s.log.Warn("memory synonyms", "word", w, "err", err)
		return out
	}
	for _, h := range hyper {
		add(h.Word, hypernymWeight)
	}
	return out
}

// WordNet reports whether synonyms are in use and, if not, why.
func (s *Store) WordNet() (bool, error) {
	wn := s.syn.get()
	return wn != nil, s.syn.err
}
