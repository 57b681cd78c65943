package redact

import (
	"bytes"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

type mapStore map[string]string

func (m mapStore) Get(ref string) (string, error) {
	if v, ok := m[ref]; ok {
		return v, nil
	}
	return "", errors.New("not found")
}

type writable struct{ mapStore }

func (w writable) Set(ref, v string) error { w.mapStore[ref] = v; return nil }
func (w writable) Delete(ref string) error { delete(w.mapStore, ref); return nil }

func TestSetRedactsEveryForm(t *testing.T) {
	var s Set
	const v = `s3cr3t+/"value`
	s.Add("short") // too short to redact
	s.Add(v)
	for _, in := range []string{v, url.QueryEscape(v), base64.StdEncoding.EncodeToString([]byte(v)), `s3cr3t+/\"value`} {
		if got := s.String("key=" + in + ";"); got != "key=[redacted];" {
			t.Errorf("%q -> %q", in, got)
		}
	}
	if got := s.String("a short word"); got != "a short word" {
		t.Errorf("short value redacted: %q", got)
	}
	b := []byte(`{"x":"nothing here"}`)
	if got := s.Bytes(b); &got[0] != &b[0] {
		t.Error("Bytes copied an unchanged slice")
	}
	type doc struct {
		A string
		B []string
	}
	if got := JSON(&s, doc{A: "x " + v, B: []string{v}}); got.A != "x [redacted]" || got.B[0] != "[redacted]" {
		t.Errorf("JSON: %+v", got)
	}
}

func TestRecordLearnsValuesAndKeepsWriting(t *testing.T) {
	var s Set
	st := Record(mapStore{"a": "value-of-a-123"}, &s)
	if _, ok := st.(writer); ok {
		t.Fatal("a read-only store became writable")
	}
	if got := s.String("value-of-a-123"); got != "value-of-a-123" {
		t.Fatal("redacted before it was read")
	}
	st.Get("a")
	if got := s.String("value-of-a-123"); got != Mark {
		t.Fatalf("not redacted after Get: %q", got)
	}
	w := Record(writable{mapStore{}}, &s)
	ww, ok := w.(writer)
	if !ok {
		t.Fatal("a writable store lost Set")
	}
	ww.Set("b", "stored-value-456")
	if got := s.String("stored-value-456"); got != Mark {
		t.Fatalf("a stored value is not redacted: %q", got)
	}
	if Record(nil, &s) != nil {
		t.Fatal("nil store")
	}
}

func TestHandlerRedactsMessagesAndAttributes(t *testing.T) {
	var s Set
	s.Add("hunter2hunter2")
	var buf bytes.Buffer
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil), &s)).With("bound", "x hunter2hunter2")
	log.Warn("got hunter2hunter2", "err", errors.New("401: Bearer hunter2hunter2"), slog.Group("g", "k", "hunter2hunter2"), "n", 3)
	if out := buf.String(); strings.Contains(out, "hunter2") || strings.Count(out, Mark) != 4 || !strings.Contains(out, "n=3") {
		t.Fatalf("log line: %s", out)
	}
}
