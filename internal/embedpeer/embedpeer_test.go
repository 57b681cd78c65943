package embedpeer

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"jarvis/memory/wordnet"
)

func cos(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d // vectors are unit length
}

// Same text, same vector; texts sharing a WordNet meaning are closer than
// unrelated ones; the endpoint speaks OpenAI's format and fails on demand.
func TestPeer(t *testing.T) {
	wn, err := wordnet.Open(wordnet.DefaultDir)
	if err != nil {
		t.Fatalf("%v (scripts/setup.sh installs wordnet-base)", err)
	}
	defer wn.Close()
	p := New(wn, 512)
	a, b := p.Embed("Saw the physician today."), p.Embed("Saw the physician today.")
	if cos(a, b) < 0.9999 {
		t.Fatalf("same text: cosine %v", cos(a, b))
	}
	physician, doctor, bread := p.Embed("the physician"), p.Embed("my doctor"), p.Embed("fresh bread")
	if cos(physician, doctor) < 0.2 || cos(physician, doctor) <= cos(physician, bread)+0.1 {
		t.Fatalf("physician~doctor %v, physician~bread %v", cos(physician, doctor), cos(physician, bread))
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	post := func(body string) (*http.Response, map[string]any) {
		res, err := http.Post(srv.URL+"/v1/embeddings", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		return res, out
	}
	res, out := post(`{"model":"m","input":["one","two"]}`)
	if res.StatusCode != 200 || len(out["data"].([]any)) != 2 || p.Texts.Load() != 2 {
		t.Fatalf("%d %v, texts %d", res.StatusCode, out, p.Texts.Load())
	}
	if res, _ := post(`{"model":"m","input":[1]}`); res.StatusCode != 400 {
		t.Fatalf("numeric input: %d", res.StatusCode)
	}
	p.Fail.Store(true)
	if res, _ := post(`{"model":"m","input":"x"}`); res.StatusCode != 503 {
		t.Fatalf("scripted failure: %d", res.StatusCode)
	}
}
