package memory

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Several phrasings of one question. A model that found nothing relevant
// searches again with other words; it may also send those words at once.
// SearchAny runs each phrasing and fuses the lists by reciprocal rank
// (RRF: a hit scores the sum of 1/(rrfK+rank) over the lists that have
// it), so a note that several phrasings find comes first and a note only
// one phrasing finds still gets in.

// MaxPhrasings caps the phrasings of one SearchAny.
const MaxPhrasings = 5

const rrfK = 60 // the usual constant of reciprocal rank fusion

// SearchAny is Search over several phrasings of one question, fused (see
// above). Blank phrasings and repeats are skipped; one phrasing is Search.
// More than MaxPhrasings is an error.
func (s *Store) SearchAny(ctx context.Context, qs []string, kind string, limit int) ([]Result, error) {
	var uniq []string
	for _, q := range qs {
		q = strings.TrimSpace(q)
		if q != "" && !slices.Contains(uniq, q) {
			uniq = append(uniq, q)
		}
	}
	if len(uniq) > MaxPhrasings {
		return nil, fmt.Errorf("%w: %d phrasings; send at most %d", ErrInvalidQuery, len(uniq), MaxPhrasings)
	}
	if len(uniq) <= 1 {
		q := ""
		if len(uniq) == 1 {
			q = uniq[0]
		}
		return s.Search(ctx, q, kind, limit)
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	type fused struct {
		r     Result
		score float64
		first int // order of first appearance, to break ties
	}
	var all []*fused
	for _, q := range uniq {
		rs, err := s.Search(ctx, q, kind, min(2*limit, MaxLimit))
		if err != nil {
			return nil, err
		}
		for rank, r := range rs {
			var f *fused
			for _, x := range all {
				if x.r.Path == r.Path && x.r.LineStart <= r.LineEnd && r.LineStart <= x.r.LineEnd {
					f = x // the same lines found by another phrasing
					break
				}
			}
			if f == nil {
				f = &fused{r: r, first: len(all)}
				all = append(all, f)
			}
			f.score += 1 / float64(rrfK+rank+1)
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].first < all[j].first
	})
	out := make([]Result, 0, min(limit, len(all)))
	for _, f := range all[:min(limit, len(all))] {
		out = append(out, f.r)
	}
	return out, nil
}
