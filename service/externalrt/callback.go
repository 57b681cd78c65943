package externalrt

// The inbound side of external agents: POST /external/sessions/{sessionId}/messages.
//
// Authentication (docs/reference/http-api.md, the external-agent callback route), in this order:
//   - Standard Webhooks: when the request has webhook-timestamp or
//     webhook-signature and the agent has a secretRef, the signature must
//     verify (5-minute window) or the request is refused, token or not;
//   - the per-session token of the callback URL (?token=...);
//   - nothing, when the agent's config says "callbackAuth": "none".
//
// A delivery id (webhook-id, or Idempotency-Key) is claimed in the same
// transaction as the message: a re-delivered reply is answered 200 with
// "duplicate": true and adds nothing.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"jarvis/api"
	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/service/webhook"
)

const (
	externalMaxDeliveryIDLen = 256
)

// SanitizeReport says what SanitizeText removed.
type SanitizeReport struct {
	InvalidUTF8Bytes int `json:"invalidUtf8Bytes,omitempty"`
	NULBytes         int `json:"nulBytes,omitempty"`
}

func (r SanitizeReport) Changed() bool { return r.InvalidUTF8Bytes+r.NULBytes > 0 }

func (r *SanitizeReport) add(o SanitizeReport) {
	r.InvalidUTF8Bytes += o.InvalidUTF8Bytes
	r.NULBytes += o.NULBytes
}

// SanitizeText removes bytes that are not valid UTF-8 and NUL bytes.
func SanitizeText(b []byte) (string, SanitizeReport) {
	var rep SanitizeReport
	if utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 {
		return string(b), rep
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		if b[i] == 0 {
			rep.NULBytes++
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			rep.InvalidUTF8Bytes++
			i++
			continue
		}
		out = append(out, b[i:i+n]...)
		i += n
	}
	return string(out), rep
}

// auditExternal logs a callback (Info, no secrets, no text) and stores the
// audit row of one that stored nothing (accepted ones are stored with their message).
func (rt *Runtime) auditExternal(a store.ExternalAudit, store_ bool) {
	rt.env.Log.Info("external message", "session", a.SessionID, "agent", a.AgentID, "bytes", a.Bytes, "auth", a.Auth,
		"accepted", a.Accepted, "reason", a.Reason, "delivery_id", a.DeliveryID, "message_id", a.MessageID, "sanitized", a.Sanitized)
	if store_ {
		if err := rt.env.Store.AddExternalAudit(context.Background(), a); err != nil {
			rt.env.Log.Error("store external audit", "session", a.SessionID, "err", err)
		}
	}
}

// handleExternalMessage is POST /external/sessions/{sessionId}/messages: an
// external agent's reply, raw text (Markdown) or application/json {"text"}.
func (rt *Runtime) handleExternalMessage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	sid := r.PathValue("sessionId")
	au := store.ExternalAudit{SessionID: sid, Auth: "failed", Bytes: max(r.ContentLength, 0)}
	if len(au.SessionID) > turn.MaxIDLen {
		au.SessionID = au.SessionID[:turn.MaxIDLen]
	}
	reject := func(he *httpapi.Error, reason string) error {
		au.Reason = reason
		rt.auditRejected(au)
		return he
	}
	tok := r.URL.Query().Get("token")
	tokHash := ""
	if tok != "" {
		tokHash = callback.HashToken(tok)
	}
	sess, owner, err := rt.env.Store.ExternalCallbackTarget(ctx, sid, tokHash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return reject(httpapi.Errorf(http.StatusNotFound, "session_not_found", "no session %q", sid), "unknown session")
	case err != nil:
		return err
	case sess.DeletedAt != "":
		return reject(httpapi.Errorf(http.StatusNotFound, "session_not_found", "no session %q", sid), "deleted session")
	}
	au.AgentID = sess.AgentID
	agent, ok := rt.env.Config().Agent(sess.AgentID)
	if !ok || agent.Type != config.TypeExternal {
		return reject(httpapi.Errorf(http.StatusNotFound, "not_external_session", "session %q does not belong to an external agent", sid), "not an external agent's session")
	}
	x, err := rt.externalSettings(agent)
	if err != nil {
		return reject(httpapi.Errorf(http.StatusServiceUnavailable, "external_not_configured", "%s", err.Error()), "agent not configured")
	}

	// The token is checked before the body is read: a caller without one
	// costs no more than this.
	tokenGiven := tok != ""
	tokenOK := tokenGiven && owner == sid
	if tokenOK {
		au.Auth = externalAuthToken
	}
	signed := r.Header.Get("webhook-signature") != "" || r.Header.Get("webhook-timestamp") != ""
	if !tokenOK && !signed && x.CallbackAuth != externalAuthNone {
		reason := "no token"
		if tokenGiven {
			reason = "wrong token"
		}
		return reject(httpapi.Errorf(http.StatusUnauthorized, "unauthorized",
			"%s: post to the callbackUrl the service gave the agent (it carries ?token=...), or sign with the agent's webhook secret", reason), reason)
	}

	limit := x.maxBytes()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			au.Bytes = max(au.Bytes, limit+1)
			return reject(httpapi.Errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the message is larger than %d bytes", limit).With("limit_bytes", limit), "body too large")
		}
		return err
	}
	au.Bytes = int64(len(body))

	auth := ""
	switch {
	case signed && x.SecretRef != "":
		key, err := rt.externalSecret(x)
		if err != nil {
			return reject(httpapi.Errorf(http.StatusServiceUnavailable, "callback_secret_unavailable", "%s", err.Error()), "secret unavailable")
		}
		if _, err := webhook.Verify(key, r.Header, body, rt.env.Now()); err != nil {
			au.Auth = "failed"
			return reject(httpapi.Errorf(http.StatusUnauthorized, "unauthorized", "%s", err.Error()), "bad signature: "+err.Error())
		}
		auth = "signature"
	case tokenOK:
		auth = externalAuthToken
	case x.CallbackAuth == externalAuthNone:
		auth = externalAuthNone
	default:
		return reject(httpapi.Errorf(http.StatusUnauthorized, "unauthorized", "agent %q has no webhook secret (external.secretRef): post to the callbackUrl with its token", agent.AgentID), "signature without a configured secret")
	}
	au.Auth = auth

	text, rep := SanitizeText(body)
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "application/json" {
		var req api.ExternalMessageRequest
		if err := json.Unmarshal([]byte(text), &req); err != nil {
			return reject(httpapi.Errorf(http.StatusBadRequest, "invalid_json", "malformed JSON: %v (send {\"text\": \"...\"} or a text body)", err), "invalid json")
		}
		var rep2 SanitizeReport
		text, rep2 = SanitizeText([]byte(req.Text))
		rep.add(rep2)
	}
	if strings.TrimSpace(text) == "" {
		return reject(httpapi.Errorf(http.StatusBadRequest, "empty_message", "the message has no text"), "empty message")
	}
	delivery := r.Header.Get("webhook-id")
	if delivery == "" {
		delivery = r.Header.Get("Idempotency-Key")
	}
	if len(delivery) > externalMaxDeliveryIDLen {
		return reject(httpapi.Errorf(http.StatusBadRequest, "invalid_delivery_id", "webhook-id / Idempotency-Key is longer than %d bytes", externalMaxDeliveryIDLen), "delivery id too long")
	}
	au.DeliveryID = delivery

	meta := map[string]any{"origin": api.EventOriginExternal, "agentId": agent.AgentID, "auth": auth}
	if delivery != "" {
		meta["deliveryId"] = delivery
	}
	if rep.Changed() {
		meta["sanitized"] = rep
		b, _ := json.Marshal(rep)
		au.Sanitized = string(b)
	}
	metaJSON, _ := json.Marshal(meta)
	replyID := turn.NewID("xr_")
	msg := &store.Message{SessionID: sid, TurnID: replyID, Role: "assistant", Content: rt.red.String(text), Meta: rt.red.String(string(metaJSON))}
	seq, err := rt.env.Events.PublishWith(ctx, sid, api.EventFinal,
		api.ExternalReplyEvent{Text: text, TurnID: replyID, Origin: api.EventOriginExternal, AgentID: agent.AgentID},
		rt.env.Store.ExternalInject(store.ExternalInjection{Message: msg, DeliveryID: delivery, Audit: au, Snippet: turn.Snippet(text)}))
	if errors.Is(err, store.ErrDuplicateDelivery) {
		au.Reason = "duplicate delivery"
		rt.auditExternal(au, true)
		return httpapi.WriteJSON(w, http.StatusOK, api.ExternalMessageResponse{OK: true, Duplicate: true})
	}
	if err != nil {
		return err
	}
	au.Accepted, au.MessageID = true, msg.ID
	rt.auditExternal(au, false)
	key := delivery
	if key == "" {
		key = fmt.Sprint("message ", msg.ID) // no delivery id: each accepted message is its own
	}
	rt.env.AnswerArrived(ctx, agent, sid, "", rt.red.String(text), "external", agent.AgentID, sid, key)
	rt.pruneExternal()
	return httpapi.WriteJSON(w, http.StatusOK, api.ExternalMessageResponse{OK: true, MessageID: msg.ID, EventID: seq, TurnID: replyID, Sanitized: rep.Changed()})
}

// pruneExternal forgets old delivery ids and cuts external_audit to its
// retention cap, at most every 10 minutes. Signed deliveries older than
// the 5-minute window are refused anyway; ids sent with a token are
// remembered for a day.
func (rt *Runtime) pruneExternal() {
	now := rt.env.Now()
	last := rt.lastPrune.Load()
	if now.Unix()-last < 600 || !rt.lastPrune.CompareAndSwap(last, now.Unix()) {
		return
	}
	if err := rt.replays.Prune(context.Background()); err != nil {
		rt.env.Log.Error("prune external deliveries", "err", err)
	}
	if n, err := rt.env.Store.PruneExternalAudit(context.Background(), externalAuditKeep); err != nil {
		rt.env.Log.Error("prune external audit", "err", err)
	} else if n > 0 {
		rt.env.Log.Info("external audit pruned to its retention cap", "deleted", n, "keep", externalAuditKeep)
	}
}
