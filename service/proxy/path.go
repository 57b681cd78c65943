package proxy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A path is a compiled response-mapping expression such as
// "data.reply.text", "choices[0].message.content", "steps[*].thought" or
// "[0].text". Keys are separated by dots; "[n]" indexes an array (negative n
// counts from the end, so "[-1]" is the last element) and "[*]" fans out
// over every element. Keys containing dots or brackets cannot be expressed;
// agents with such keys need an adapter.
type path []step

type step struct {
	key   string // object key; empty for an index step
	index int    // array index when isIndex
	isIdx bool
	all   bool // "[*]"
}

// parsePath compiles expr. The empty expression is the root value.
func parsePath(expr string) (path, error) {
	var p path
	s := strings.TrimSpace(expr)
	if s == "" {
		return p, nil
	}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '[' at offset %d", i)
			}
			inner := s[i+1 : i+end]
			if inner == "*" {
				p = append(p, step{isIdx: true, all: true})
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil {
					return nil, fmt.Errorf("index %q at offset %d is not an integer or *", inner, i)
				}
				p = append(p, step{isIdx: true, index: n})
			}
			i += end + 1
			if i < len(s) && s[i] != '.' && s[i] != '[' {
				return nil, fmt.Errorf("unexpected %q after ']' at offset %d", s[i], i)
			}
			if i < len(s) && s[i] == '.' {
				i++
				if i == len(s) {
					return nil, fmt.Errorf("path ends with '.'")
				}
			}
		case c == '.':
			return nil, fmt.Errorf("empty key at offset %d", i)
		case c == ']':
			return nil, fmt.Errorf("unexpected ']' at offset %d", i)
		default:
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' && s[j] != ']' {
				j++
			}
			p = append(p, step{key: s[i:j]})
			i = j
			if i < len(s) && s[i] == '.' {
				i++
				if i == len(s) {
					return nil, fmt.Errorf("path ends with '.'")
				}
			}
		}
	}
	return p, nil
}

// eval returns every value the path reaches in v (a tree decoded by
// encoding/json). A missing key or an out-of-range index yields nothing
// rather than an error: a field absent from one message may be present in
// the next.
func (p path) eval(v any) []any {
	cur := []any{v}
	for _, st := range p {
		var next []any
		for _, c := range cur {
			switch {
			case !st.isIdx:
				if m, ok := c.(map[string]any); ok {
					if x, ok := m[st.key]; ok {
						next = append(next, x)
					}
				}
			case st.all:
				if a, ok := c.([]any); ok {
					next = append(next, a...)
				}
			default:
				if a, ok := c.([]any); ok {
					i := st.index
					if i < 0 {
						i += len(a)
					}
					if i >= 0 && i < len(a) {
						next = append(next, a[i])
					}
				}
			}
		}
		if len(next) == 0 {
			return nil
		}
		cur = next
	}
	return cur
}

// scalarText renders a leaf value as text: strings as they are, numbers and
// booleans in their JSON form, null as "", objects and arrays as compact JSON.
func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return ""
		}
		return string(b)
	}
}
