package service

// Secrets echoed by agents. The service's one redactor (service/redact)
// learns every secret value read from the secret store: proxy agents'
// header secrets, round-table agents' keys, webhook and external agents'
// secrets, model-provider keys. It is applied to the log (every line), to
// every event (stored and live), to a turn's end (reply, error, stored
// message: what agents_message returns to a model), to a round table's
// result (exclusions, answers, Markdown, health), to agent statuses, to
// the proxy Test report, and to the tool results the desktop posts, before
// the model sees them or they are stored (redactResult). Upstream bodies go into no log line: a failed call
// logs its kind and status.

import (
	"jarvis/api"
	"jarvis/service/redact"
	"jarvis/service/turn"
)

// recordSecrets wraps the secret store so that every value it returns or
// stores is redacted; nil stays nil.
func recordSecrets(st Secrets, red *redact.Set) Secrets {
	if st == nil {
		return nil
	}
	return redact.Record(st, red)
}

// redactOutcome removes secret values from a turn's end.
func (s *Service) redactOutcome(o turn.Outcome) turn.Outcome {
	o.Final = s.red.String(o.Final)
	o.Tail = s.red.String(o.Tail)
	if o.Fail != nil {
		f := *o.Fail
		f.Message = s.red.String(f.Message)
		o.Fail = &f
	}
	if o.Last != nil {
		m := *o.Last
		m.Content, m.Meta, m.ToolCalls = s.red.String(m.Content), s.red.String(m.Meta), s.red.String(m.ToolCalls)
		o.Last = &m
	}
	return o
}

// redactResult removes secret values from a tool result the desktop posts,
// before the model sees it or it is stored, and marks it Redacted so the
// card says so (the desktop, when it shares the redactor, has already done
// it and marked it).
func (s *Service) redactResult(res api.ToolResult) api.ToolResult {
	if r := s.red.String(res.Result); r != res.Result {
		res.Result, res.Redacted = r, true
	}
	if res.Error != nil {
		if e := s.red.String(*res.Error); e != *res.Error {
			res.Error, res.Redacted = &e, true
		}
	}
	return res
}

// RedactSecrets is the redactor for the desktop in the same process: text
// with every secret value the service knows replaced, and whether any was.
func (s *Service) RedactSecrets(text string) (string, bool) {
	r := s.red.String(text)
	return r, r != text
}
