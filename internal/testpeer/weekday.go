package testpeer

import (
	"encoding/json"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// WeekdayNote is the sentence of the scheduled-tasks scenario (issue 43's
// done-when): what the user types in the conversation.
const WeekdayNote = "every weekday at 8:00, summarise yesterday's notes into today's note"

// WeekdayNotes is the scripted model of that scenario, for the app's test on
// a fake clock and the end-to-end run in the real window (openai-peer
// -weekday-notes): asked for the weekday summary, it calls schedule_task (in
// Europe/Berlin, with read_file and write_file); run as the task, it reads
// yesterday's note (notes/<the day before today>.md), writes today's
// (notes/<today>.md) and says so. today is a date, YYYY-MM-DD; the answer to
// anything else is "?".
func WeekdayNotes(today string) (func(req openai.ChatCompletionRequest) Script, error) {
	day, err := time.Parse(time.DateOnly, today)
	if err != nil {
		return nil, err
	}
	yesterday := day.AddDate(0, 0, -1)
	todayNote, yesterdayNote := "notes/"+today+".md", "notes/"+yesterday.Format(time.DateOnly)+".md"
	write, _ := json.Marshal(map[string]string{"path": todayNote, "content": "Summary of " + yesterday.Weekday().String() + ": walked, planned the week.\n",
		"reason": "today's note"})
	read, _ := json.Marshal(map[string]string{"path": yesterdayNote})
	schedule, _ := json.Marshal(map[string]any{"name": "Daily note", "prompt": "Summarise yesterday's notes into today's note.",
		"schedule": "every weekday at 8:00", "time_zone": "Europe/Berlin", "tools": []string{"read_file", "write_file"},
		"reason": "you asked for a weekday summary"})
	return func(req openai.ChatCompletionRequest) Script {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == openai.ChatMessageRoleTool {
			var user string
			for _, m := range req.Messages {
				if m.Role == openai.ChatMessageRoleUser {
					user = m.Content
				}
			}
			switch {
			case strings.HasPrefix(user, "every weekday"):
				return Script{Deltas: []string{"Done: ", last.Content}}
			case strings.Contains(last.Content, "wrote") || strings.Contains(last.Content, "Wrote"):
				return Script{Deltas: []string{"Today's note has yesterday's summary: ", todayNote + "."}}
			default: // yesterday's note was read: write today's
				return Script{Calls: []Call{{ID: "call_w", Name: "write_file", Args: string(write)}}}
			}
		}
		if strings.HasPrefix(last.Content, WeekdayNote[:len("every weekday at 8:00")]) {
			return Script{Calls: []Call{{ID: "call_s", Name: "schedule_task", Args: string(schedule)}}}
		}
		if strings.Contains(last.Content, "Summarise yesterday's notes") {
			return Script{Calls: []Call{{ID: "call_r", Name: "read_file", Args: string(read)}}}
		}
		return Script{Deltas: []string{"?"}}
	}, nil
}
