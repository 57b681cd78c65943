// Package webhook signs and verifies Standard Webhooks requests
// (https://www.standardwebhooks.com): the headers webhook-id,
// webhook-timestamp (Unix seconds) and webhook-signature, a space-separated
// list of "v1,<base64 HMAC-SHA256 of id.timestamp.body>". External and proxy
// agents may sign their callbacks this way, and the service signs what it
// forwards to agents configured with a secret.
//
// The functions are pure and safe for concurrent use; remembering delivery
// ids against replays is the caller's business (it knows how to store them).
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Window is how far a signature's timestamp may be from the receiver's clock.
const Window = 5 * time.Minute

// Header names.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Prefix is the optional prefix of a secret's text form.
const Prefix = "whsec_"

// ErrBadSecret says a secret is not in the standard's form.
var ErrBadSecret = errors.New(`a Standard Webhooks secret is base64 (standard alphabet, padded), with or without the "whsec_" prefix`)

// Key returns the HMAC key of a secret as the standard's reference libraries
// derive it: the "whsec_" prefix, if any, is dropped and the rest is
// base64-decoded. A secret that is not base64 is an error (it is never
// used as raw bytes: the other side would compute another key).
func Key(secret string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, Prefix))
	if err != nil || len(b) == 0 {
		return nil, ErrBadSecret
	}
	return b, nil
}

// Sign returns the base64 HMAC-SHA256 of "id.timestamp.body".
func Sign(key []byte, id, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// SetHeaders signs body as delivery id at now and sets the three headers on h.
func SetHeaders(h http.Header, key []byte, id string, body []byte, now time.Time) {
	ts := strconv.FormatInt(now.Unix(), 10)
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, "v1,"+Sign(key, id, ts, body))
}

// Signed reports whether a request carries (some of) the signature headers.
func Signed(h http.Header) bool {
	return h.Get(HeaderSignature) != "" || h.Get(HeaderTimestamp) != ""
}

// Verify checks the signature headers of a request against its body and
// returns its webhook-id. The error says what is wrong, for the caller's
// 401 and audit record; it never contains the key.
func Verify(key []byte, h http.Header, body []byte, now time.Time) (string, error) {
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if id == "" || ts == "" || sigs == "" {
		return "", errors.New("signature headers incomplete: webhook-id, webhook-timestamp and webhook-signature are all required")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", errors.New("webhook-timestamp is not a Unix time in seconds")
	}
	if off := now.Sub(time.Unix(sec, 0)); off > Window || off < -Window {
		return "", fmt.Errorf("webhook-timestamp is %s away from the receiver's clock (the window is %s)", off.Abs().Truncate(time.Second), Window)
	}
	want := Sign(key, id, ts, body)
	for _, part := range strings.Fields(sigs) {
		ver, sig, ok := strings.Cut(part, ",")
		if ok && ver == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return id, nil
		}
	}
	return "", errors.New("no valid v1 signature in webhook-signature")
}
