package wordnet

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Against Debian's wordnet-base (scripts/setup.sh installs it).
func TestSynonyms(t *testing.T) {
	wn, err := Open(DefaultDir)
	if err != nil {
		t.Fatalf("%v (scripts/setup.sh installs wordnet-base)", err)
	}
	defer wn.Close()
	words := func(syns []Synonym) []string {
		var out []string
		for _, s := range syns {
			out = append(out, s.Word)
		}
		return out
	}
	for word, want := range map[string][]string{
		"physician": {"doctor"},
		"sofa":      {"couch"},
		"car":       {"automobile", "auto"},
		"relocated": {"relocate"}, // base form through the detachment rules
		"bought":    {"buy", "purchase"},
		"mice":      {"mouse"}, // through noun.exc
		"film":      {"movie"},
	} {
		syns, err := wn.Synonyms(word, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !slices.Contains(words(syns), w) {
				t.Errorf("Synonyms(%q) = %v, want %q among them", word, words(syns), w)
			}
		}
		if slices.Contains(words(syns), word) {
			t.Errorf("Synonyms(%q) lists the word itself", word)
		}
	}
	if got, _ := wn.Synonyms("zzqxv", 3); len(got) != 0 {
		t.Errorf("unknown word: %v", got)
	}
	if !slices.Contains(wn.Inflections("buy"), "bought") {
		t.Errorf("Inflections(buy) = %v", wn.Inflections("buy"))
	}
}

func TestOpenMissing(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil {
		t.Fatal("Open of an empty folder succeeded")
	}
	os.WriteFile(filepath.Join(dir, "index.noun"), []byte("  licence\n"), 0o600)
	if _, err := Open(dir); err == nil {
		t.Fatal("Open of a partial install succeeded")
	}
}
