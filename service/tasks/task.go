package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"jarvis/api"
)

// DefaultApprovalWait is how long a call of a task's run waits for your
// approval when the task does not say.
const DefaultApprovalWait = 24 * time.Hour

// Normalize checks a task as given and fills its defaults; the error says in
// plain words what is wrong. The schedule is read in the task's time zone.
func Normalize(t api.Task) (api.Task, Schedule, error) {
	t.Name = strings.TrimSpace(t.Name)
	if t.Name == "" {
		return t, Schedule{}, errors.New("the task has no name")
	}
	if strings.TrimSpace(t.Prompt) == "" {
		return t, Schedule{}, fmt.Errorf("task %q: say what the task should do (its prompt is empty)", t.Name)
	}
	s, err := Parse(t.Schedule, t.TimeZone)
	if err != nil {
		return t, Schedule{}, fmt.Errorf("task %q: %w", t.Name, err)
	}
	switch t.CatchUp {
	case "":
		t.CatchUp = CatchUpOnce
	case CatchUpOnce, CatchUpSkip:
	default:
		return t, Schedule{}, fmt.Errorf("task %q: a missed run is either run once (\"once\") or skipped (\"skip\"), not %q", t.Name, t.CatchUp)
	}
	if t.ApprovalWaitMinutes < 0 {
		return t, Schedule{}, fmt.Errorf("task %q: the approval wait cannot be negative", t.Name)
	}
	if t.ApprovalWaitMinutes == 0 {
		t.ApprovalWaitMinutes = int(DefaultApprovalWait / time.Minute)
	}
	if t.Tools == nil {
		t.Tools = []string{}
	}
	for _, name := range t.Tools {
		if name == "schedule_task" {
			return t, Schedule{}, fmt.Errorf("task %q: a task cannot schedule other tasks", t.Name)
		}
		if !Usable(name) {
			return t, Schedule{}, fmt.Errorf("task %q: there is no tool %q", t.Name, name)
		}
	}
	t.Tools = sortedTools(t.Tools)
	t.Policy, t.ScheduleWords = Words(t.Tools), s.Summary
	return t, s, nil
}

func serviceTool(name string) bool {
	switch name {
	case "memory_search", "memory_get", "memory_write", "agents_message", "round_table":
		return true
	}
	return false
}

// ApprovalWait is how long a call of t's run waits for approval.
func ApprovalWait(t api.Task) time.Duration {
	if t.ApprovalWaitMinutes <= 0 {
		return DefaultApprovalWait
	}
	return time.Duration(t.ApprovalWaitMinutes) * time.Minute
}

var slugDrop = regexp.MustCompile(`[^a-z0-9]+`)

// FileID is the id of the task of tasks.json with this name.
func FileID(name string) string {
	return "task_file_" + strings.Trim(slugDrop.ReplaceAllString(strings.ToLower(name), "-"), "-")
}

// File is tasks.json: {"tasks": [ ... ]}.
type File struct {
	Tasks []api.Task `json:"tasks"`
}

// LoadFile reads tasks.json; a missing file is no tasks. Each task is
// checked (Normalize) and given its id from its name.
func LoadFile(path string) ([]api.Task, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		line := 1 + bytes.Count(b[:min(int(dec.InputOffset()), len(b))], []byte("\n"))
		return nil, fmt.Errorf("%s:%d: %v", path, line, err)
	}
	seen := map[string]bool{}
	out := make([]api.Task, 0, len(f.Tasks))
	for i, t := range f.Tasks {
		n, _, err := Normalize(t)
		if err != nil {
			return nil, fmt.Errorf("%s: task %d: %w", path, i+1, err)
		}
		n.ID, n.Source = FileID(n.Name), "file"
		if seen[n.ID] {
			return nil, fmt.Errorf("%s: two tasks are named %q", path, n.Name)
		}
		seen[n.ID] = true
		out = append(out, n)
	}
	return out, nil
}
