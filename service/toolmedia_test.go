package service_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"jarvis/api"
)

// TestToolMediaKeptForTheTranscript: a tool result's images and audio are
// stored with the tool's message (not in its text) and come back in the
// transcript after the service restarts on the same data directory, so the
// window can show them on the card of a reopened conversation. Media the
// window would not show (SVG) or beyond the audio cap are not kept.
func TestToolMediaKeptForTheTranscript(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j-media")
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n" + strings.Repeat("p", 64)))
	wav := base64.StdEncoding.EncodeToString([]byte("RIFF" + strings.Repeat("w", 64)))
	big := base64.StdEncoding.EncodeToString(make([]byte, 6<<20))
	svg := base64.StdEncoding.EncodeToString([]byte("<svg/>"))
	err := e.c.ChatStream(context.Background(), sid, `look [[tool notify {"title":"x"}]]`, func(ev api.StreamEvent) error {
		e.answerTools(sid, func(api.ToolCall) api.ToolResult {
			return api.ToolResult{OK: true, Result: "[image 1: image/png, 72 bytes, attached] [audio 1: audio/wav, 68 bytes, attached]",
				Media: []api.Media{{Type: "image", MIMEType: "image/png", Data: png}, {Type: "image", MIMEType: "image/svg+xml", Data: svg},
					{Type: "audio", MIMEType: "audio/wav", Data: wav}, {Type: "audio", MIMEType: "audio/wav", Data: big}}}
		})(ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	e.stop()
	e.start()

	var tool *api.TranscriptMessage
	tr := e.agTranscript(sid)
	for i := range tr {
		if tr[i].Role == "tool" {
			tool = &tr[i]
		}
	}
	if tool == nil {
		t.Fatalf("no tool message in %+v", tr)
	}
	if strings.Contains(tool.Text, png) || strings.Contains(tool.Text, wav) {
		t.Fatalf("the media went into the message's text: %.200q", tool.Text)
	}
	var meta struct {
		Images []string `json:"images"`
		Audio  []string `json:"audio"`
	}
	if err := json.Unmarshal(tool.Meta, &meta); err != nil {
		t.Fatalf("meta %s: %v", tool.Meta, err)
	}
	if len(meta.Images) != 1 || meta.Images[0] != "data:image/png;base64,"+png {
		t.Fatalf("images kept: %d %.80q", len(meta.Images), meta.Images)
	}
	if len(meta.Audio) != 1 || meta.Audio[0] != "data:audio/wav;base64,"+wav {
		t.Fatalf("audio kept: %d (the clip over the cap must be left out)", len(meta.Audio))
	}

	// The next turn's request still sends the model the image (the
	// tool's message as loaded from the store), never the audio.
	if err := e.c.ChatStream(context.Background(), sid, "and now?", func(api.StreamEvent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	reqs := e.upstream.Requests()
	images, audio := 0, 0
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, p := range m.MultiContent {
			if p.ImageURL != nil {
				if strings.HasPrefix(p.ImageURL.URL, "data:image/png") {
					images++
				}
				if strings.HasPrefix(p.ImageURL.URL, "data:audio") {
					audio++
				}
			}
		}
	}
	if images != 1 || audio != 0 {
		t.Fatalf("the reloaded conversation sent %d images and %d audio clips to the model", images, audio)
	}
}
