package main

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	pathpkg "path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LoCoMo's data: ten conversations between two speakers over a few dozen
// sessions, each session dated, each turn with an id ("D3:12": session 3,
// turn 12); and questions whose evidence is the ids of the turns that
// answer them. It comes as locomo10.json (a list of samples, each with
// "conversation" and "qa") or as one file per conversation (the keys of
// "conversation" and "qa" at the top level); Load reads either, from a
// .json file, a folder or a .zip.

// turn is one dialog turn.
type turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
	Caption string `json:"blip_caption"`
}

// session is a dated list of turns.
type session struct {
	N     int
	Date  time.Time
	Turns []turn
}

// qa is one question with the ids of its evidence turns.
type qa struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

// conversation is one sample.
type conversation struct {
	Name     string
	Sessions []session
	QA       []qa
}

// categories names LoCoMo's question categories (as in the paper's
// release: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5
// adversarial, which has no answer in the conversation and is left out).
var categories = map[int]string{4: "single-hop", 1: "multi-hop", 2: "temporal", 3: "open-domain"}

// categoryOrder is the table's row order.
var categoryOrder = []int{4, 1, 2, 3}

// load reads every conversation at path (a .json file, a folder of them,
// or a .zip holding them), sorted by name.
func load(path string) ([]conversation, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var out []conversation
	add := func(name string, data []byte) error {
		cs, err := parse(name, data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		out = append(out, cs...)
		return nil
	}
	switch {
	case fi.IsDir():
		files, err := filepath.Glob(filepath.Join(path, "*.json"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			if err := add(filepath.Base(f), data); err != nil {
				return nil, err
			}
		}
	case strings.HasSuffix(path, ".zip"):
		zr, err := zip.OpenReader(path)
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() || !strings.HasSuffix(f.Name, ".json") {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return nil, err
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return nil, err
			}
			if err := add(pathpkg.Base(f.Name), data); err != nil {
				return nil, err
			}
		}
	default:
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := add(filepath.Base(path), data); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no LoCoMo conversation found", path)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// parse reads one file: a list of samples or one conversation.
func parse(name string, data []byte) ([]conversation, error) {
	data = []byte(strings.TrimSpace(string(data)))
	if len(data) > 0 && data[0] == '[' {
		var samples []struct {
			SampleID     string                     `json:"sample_id"`
			Conversation map[string]json.RawMessage `json:"conversation"`
			QA           []qa                       `json:"qa"`
		}
		if err := json.Unmarshal(data, &samples); err != nil {
			return nil, err
		}
		var out []conversation
		for i, s := range samples {
			n := s.SampleID
			if n == "" {
				n = fmt.Sprintf("%s#%d", name, i)
			}
			c, err := sessionsOf(n, s.Conversation)
			if err != nil {
				return nil, err
			}
			c.QA = s.QA
			out = append(out, c)
		}
		return out, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	c, err := sessionsOf(strings.TrimSuffix(name, ".json"), top)
	if err != nil {
		return nil, err
	}
	if raw, ok := top["qa"]; ok {
		if err := json.Unmarshal(raw, &c.QA); err != nil {
			return nil, fmt.Errorf("qa: %w", err)
		}
	}
	return []conversation{c}, nil
}

// sessionsOf reads session_N and session_N_date_time; sessions without
// turns are skipped.
func sessionsOf(name string, m map[string]json.RawMessage) (conversation, error) {
	c := conversation{Name: name}
	for k, raw := range m {
		sm := sessionKey.FindStringSubmatch(k)
		if sm == nil {
			continue
		}
		n, _ := strconv.Atoi(sm[1])
		var turns []turn
		if err := json.Unmarshal(raw, &turns); err != nil {
			return c, fmt.Errorf("%s: %w", k, err)
		}
		var when string
		if d, ok := m[k+"_date_time"]; ok {
			if err := json.Unmarshal(d, &when); err != nil {
				return c, fmt.Errorf("%s_date_time: %w", k, err)
			}
		}
		t, err := parseWhen(when)
		if err != nil {
			return c, fmt.Errorf("%s_date_time: %w", k, err)
		}
		if len(turns) > 0 {
			c.Sessions = append(c.Sessions, session{N: n, Date: t, Turns: turns})
		}
	}
	if len(c.Sessions) == 0 {
		return c, fmt.Errorf("no sessions")
	}
	sort.Slice(c.Sessions, func(i, j int) bool { return c.Sessions[i].N < c.Sessions[j].N })
	return c, nil
}

// parseWhen reads LoCoMo's "1:56 pm on 8 May, 2023".
func parseWhen(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"3:04 pm on 2 January, 2006", "3:04 pm on 2 Jan, 2006", "3:04 PM on 2 January, 2006"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("unreadable date %q (want e.g. \"1:56 pm on 8 May, 2023\")", s)
}

// evidence keeps a question's evidence ids that name a turn of the
// conversation, as written (an id such as "D8:6; D9:17" or "D30:05" names
// none); questions left without evidence are not asked.
func evidence(q qa, lines map[string]loc) []string {
	var out []string
	for _, e := range q.Evidence {
		if _, ok := lines[e]; ok {
			out = append(out, e)
		}
	}
	return out
}
