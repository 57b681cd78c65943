package service

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// Callback secrets of the agents the service calls (external agents per
// session, proxy agents per call): 32 random bytes handed out in a callback
// URL, of which only the SHA-256 is stored.

// newCallbackToken mints a callback token with prefix and returns it and
// its hash (the form kept at rest).
func newCallbackToken(prefix string) (tok, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	tok = prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return tok, hashCallbackToken(tok), nil
}

// hashCallbackToken is the stored form of a callback token.
func hashCallbackToken(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}
