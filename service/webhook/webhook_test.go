package webhook

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	key, err := Key("whsec_" + "c2VjcmV0LWtleS0xMjM=") // "secret-key-123"
	if err != nil || string(key) != "secret-key-123" {
		t.Fatalf("Key decoded %q, %v", key, err)
	}
	body := []byte("Here is a *Markdown* reply.")
	signed := func(mod func(h http.Header)) http.Header {
		h := http.Header{}
		SetHeaders(h, key, "msg_1", body, now)
		if mod != nil {
			mod(h)
		}
		return h
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	cases := []struct {
		name    string
		h       http.Header
		body    []byte
		at      time.Time
		key     []byte
		wantErr string
	}{
		{"good", signed(nil), body, now, key, ""},
		{"several signatures, one good", signed(func(h http.Header) { h.Set(HeaderSignature, "v1,AAAA v2,x "+h.Get(HeaderSignature)) }), body, now, key, ""},
		{"299 s late", signed(nil), body, now.Add(299 * time.Second), key, ""},
		{"flipped body byte", signed(nil), []byte("here is a *Markdown* reply."), now, key, "no valid v1 signature"},
		{"wrong secret", signed(nil), body, now, []byte("other"), "no valid v1 signature"},
		{"missing header", signed(func(h http.Header) { h.Del(HeaderID) }), body, now, key, "incomplete"},
		{"301 s late", signed(nil), body, now.Add(301 * time.Second), key, "away from the receiver's clock"},
		{"301 s early", signed(nil), body, now.Add(-301 * time.Second), key, "away from the receiver's clock"},
		{"bad timestamp", signed(func(h http.Header) { h.Set(HeaderTimestamp, "soon") }), body, now, key, "not a Unix time"},
		{"v2 only", signed(func(h http.Header) { h.Set(HeaderSignature, strings.Replace(h.Get(HeaderSignature), "v1,", "v2,", 1)) }), body, now, key, "no valid v1"},
		{"id changed", signed(func(h http.Header) { h.Set(HeaderID, "msg_2") }), body, now, key, "no valid v1"},
		{"timestamp changed", signed(func(h http.Header) { h.Set(HeaderTimestamp, ts+"0") }), body, now, key, "away from"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, err := Verify(c.key, c.h, c.body, c.at)
			if c.wantErr == "" {
				if err != nil || id != "msg_1" {
					t.Fatalf("Verify = %q, %v", id, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Verify error %v, want %q", err, c.wantErr)
			}
		})
	}
	if !Signed(signed(nil)) || Signed(http.Header{}) {
		t.Fatal("Signed")
	}
}

// FuzzVerify: arbitrary headers and bodies never verify without the key and never panic.
func FuzzVerify(f *testing.F) {
	f.Add("msg_1", "1800000000", "v1,abc", []byte("body"))
	f.Add("", "", "", []byte{})
	f.Add("id", "-1", "v1, v1,,", []byte{0, 1})
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		h := http.Header{}
		h.Set(HeaderID, id)
		h.Set(HeaderTimestamp, ts)
		h.Set(HeaderSignature, sig)
		if _, err := Verify([]byte("k"), h, body, time.Unix(1_800_000_000, 0)); err == nil && sig != "v1,"+Sign([]byte("k"), id, ts, body) && !strings.Contains(sig, Sign([]byte("k"), id, ts, body)) {
			t.Fatalf("verified a forged signature %q", sig)
		}
	})
}

// TestKey: a secret is base64 with or without the "whsec_" prefix, as the
// reference libraries read it; anything else is refused, never used raw.
func TestKey(t *testing.T) {
	for _, tc := range []struct {
		secret, want string
		ok           bool
	}{
		{"whsec_c2VjcmV0LWtleS0xMjM=", "secret-key-123", true},
		{"c2VjcmV0LWtleS0xMjM=", "secret-key-123", true}, // no prefix: still base64 (it was used raw)
		{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "", true},   // the standard's example secret, without prefix
		{"my plain secret", "", false},
		{"whsec_not base64!", "", false},
		{"", "", false},
		{"whsec_", "", false},
	} {
		k, err := Key(tc.secret)
		if (err == nil) != tc.ok || (tc.want != "" && string(k) != tc.want) {
			t.Errorf("Key(%q) = %q, %v", tc.secret, k, err)
		}
	}
}
