package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"jarvis/service/store"
	"jarvis/service/turn"
)

// The fill writes what a chat turn writes, directly through the store
// (service/store's AppendEvents with the writes the service gives it:
// StartTurn with the user.message event, the assistant.delta events, and
// FinishTurn with the assistant.final event), many turns to a transaction:
// through the API a million messages would take hours. The rows, their
// columns and their text are the service's; only the commits are fewer.

// fillSpec says what to fill.
type fillSpec struct {
	Sessions  int       // conversations
	Turns     int       // turns per conversation (two messages each)
	TextBytes int       // about this much text per message
	Deltas    int       // assistant.delta events per reply
	Start     time.Time // the first turn's time; turns are a minute apart
	Seed      uint64
}

// clock is a settable time source for the store and the fill.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// words is the vocabulary of the generated text: common English words and
// some rarer ones, so that searches for a common word hit many
// conversations and a rare one few.
var words = strings.Fields(`the of and to in is you that it he was for on are as with his they at be this
have from or one had by word but not what all were we when your can said there use an each which she do how
their if will up other about out many then them these so some her would make like him into time has look two
more write go see number no way could people my than first water been call who oil its now find long down day
did get come made may part over new sound take only little work know place year live me back give most very after
thing our just name good sentence man think say great where help through much before line right too mean old any
same tell boy follow came want show also around form three small set put end does another well large must big even
such because turn here why ask went men read need land different home us move try kind hand picture again change
off play spell air away animal house point page letter mother answer found study still learn should america world
invoice kubernetes postgres migration quarterly budget deadline backup restore export calendar meeting notes
recipe garden holiday flight hotel receipt tax refund doctor appointment invoice lease contract draft review`)

// sentence returns about n bytes of text.
func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// filled is what a fill wrote.
type filled struct {
	Sessions  []string
	Messages  int
	TextBytes int64 // the messages' text
}

// fill writes spec's conversations into st, setting c as it goes (st must
// read its time from c). Turns go round the sessions, so that their messages
// interleave as they do in use.
func fill(ctx context.Context, st *store.Store, c *clock, spec fillSpec) (filled, error) {
	var out filled
	r := rand.New(rand.NewPCG(spec.Seed, 44))
	now := spec.Start
	for i := range spec.Sessions {
		c.Set(now)
		sess, err := st.CreateSession(ctx, store.Session{ID: turn.NewID("g_"), AgentID: "general", Name: fmt.Sprintf("Conversation %d", i+1)})
		if err != nil {
			return out, err
		}
		out.Sessions = append(out.Sessions, sess.ID)
	}
	seqs := make(map[string]int64, spec.Sessions)
	next := func(sid string, _ func() (int64, error)) int64 { seqs[sid]++; return seqs[sid] }
	const perTx = 500 // turns per transaction
	var batch []store.EventWrite
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		errs, err := st.AppendEvents(ctx, batch, next)
		if err != nil {
			return err
		}
		for _, e := range errs {
			if e != nil {
				return e
			}
		}
		batch = batch[:0]
		return nil
	}
	event := func(sid, typ string, data any) store.Event {
		raw, _ := json.Marshal(data)
		return store.Event{SessionID: sid, Type: typ, Data: string(raw), CreatedAt: store.Timestamp(now)}
	}
	n := 0
	for range spec.Turns {
		for _, sid := range out.Sessions {
			now = now.Add(time.Minute)
			c.Set(now)
			tid := turn.NewID("t_")
			q := sentence(r, spec.TextBytes)
			a := sentence(r, spec.TextBytes)
			user := &store.Message{SessionID: sid, Role: "user", Content: q}
			batch = append(batch, store.EventWrite{Event: event(sid, "user.message", map[string]string{"text": q, "turn_id": tid}),
				Write: st.StartTurn(tid, "", user, q)})
			rest := a
			for d := range spec.Deltas {
				cut := len(rest)
				if d < spec.Deltas-1 {
					cut = min(len(a)/spec.Deltas, len(rest))
				}
				batch = append(batch, store.EventWrite{Event: event(sid, "assistant.delta", map[string]string{"text": rest[:cut], "turn_id": tid})})
				rest = rest[cut:]
			}
			last := &store.Message{SessionID: sid, TurnID: tid, Role: "assistant", Content: a}
			batch = append(batch, store.EventWrite{Event: event(sid, "assistant.final", map[string]string{"text": a, "turn_id": tid}),
				Write: st.FinishTurn(tid, sid, store.TurnDone, "", last, a)})
			out.Messages += 2
			out.TextBytes += int64(len(q) + len(a))
			if n++; n%perTx == 0 {
				if err := flush(); err != nil {
					return out, err
				}
			}
		}
	}
	return out, flush()
}

// settle brings the store to its resting state after a fill: every message
// in the search index, the replay window passed, the events compacted and
// the free pages given back (what the store's background loops do).
func settle(ctx context.Context, st *store.Store, c *clock) error {
	if _, err := st.SearchSessions(ctx, "the", "", 1); err != nil {
		return err
	}
	c.Set(c.Now().Add(store.DefaultReplayWindow + time.Minute))
	return st.Maintain(ctx)
}
