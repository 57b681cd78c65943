package memory

import (
	"context"
	"slices"
)

// Recall beyond the notes holding every word of a question. A question
// whose answer is spread over several notes ("what instruments does Ana
// play?": the clarinet one day, the violin another) is matched whole by
// few of them; the rest share only some of its words.

// fillUp returns the hits of the "any word" query that are not among had,
// ranked as Search ranks (rerank), for the places Search could not fill
// with notes holding every word of the question.
func (s *Store) fillUp(ctx context.Context, had []hit, p plan, kind string, fetch int) ([]hit, error) {
	// The user's own words only: their synonyms would multiply the
	// rows to rank, for notes that rank low anyway.
	var own []phrase
	for _, g := range p.groups {
		own = append(own, g[0])
	}
	more, err := s.query(ctx, joinPhrases(own), rankArgs(own, len(p.groups)), kind, fetch)
	if err != nil {
		return nil, err
	}
	more = slices.DeleteFunc(more, func(h hit) bool {
		return slices.ContainsFunc(had, func(o hit) bool { return o.id == h.id })
	})
	s.rerank(more, p)
	return more, nil
}
