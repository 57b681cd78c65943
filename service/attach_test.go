package service_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/internal/testpeer"
)

// png is a 1×1 PNG.
var pngURL = "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"))

func imageMessage(text, url string) api.Message {
	return api.Message{Parts: []api.MessagePart{{Type: api.PartText, Text: text}, {Type: api.PartImage, ImageURL: &api.ImageURL{URL: url}}}}
}

// imagesIn returns the image URLs of a request's user messages.
func imagesIn(r openai.ChatCompletionRequest) (texts, images []string) {
	for _, m := range r.Messages {
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL {
				images = append(images, p.ImageURL.URL)
			} else {
				texts = append(texts, p.Text)
			}
		}
	}
	return texts, images
}

// TestChatSendsImagesAsContentParts: an image attached to a message reaches
// the model as an image content part beside the text, and still does on
// the next turn (it is kept with the message).
func TestChatSendsImagesAsContentParts(t *testing.T) {
	e := newEnv(t)
	e.upstream.Respond = func(openai.ChatCompletionRequest) testpeer.Script {
		return testpeer.Script{Deltas: []string{"a red dot"}}
	}
	sid := e.session("j-img")
	if err := e.c.ChatStreamMessage(context.Background(), sid, imageMessage("what is this?", pngURL), func(api.StreamEvent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := e.c.ChatStream(context.Background(), sid, "and now?", func(api.StreamEvent) error { return nil }); err != nil {
		t.Fatal(err)
	}
	reqs := e.upstream.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		texts, images := imagesIn(r)
		if len(images) != 1 || images[0] != pngURL || len(texts) != 1 || texts[0] != "what is this?" {
			t.Fatalf("request %d: texts %q, images %d", i, texts, len(images))
		}
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Content != "and now?" || last.MultiContent != nil {
		t.Fatalf("a message without images is plain text: %+v", last)
	}
}

// TestChatRefusesBadAttachments: oversized or malformed parts are refused
// with their code in the error envelope, and no turn starts.
func TestChatRefusesBadAttachments(t *testing.T) {
	e := newEnv(t)
	sid := e.session("j-bad")
	big := strings.Repeat("x", 7<<20)
	elevenMB := "data:image/png;base64," + base64.StdEncoding.EncodeToString(make([]byte, 11<<20))
	cases := []struct {
		name   string
		parts  []api.MessagePart
		status int
		code   string
	}{
		{"image over 10 MB", imageMessage("look", elevenMB).Parts, http.StatusRequestEntityTooLarge, "attachment_too_large"},
		{"message over 20 MB", []api.MessagePart{{Type: "text", Text: big}, {Type: "text", Text: big}, {Type: "text", Text: big}}, http.StatusRequestEntityTooLarge, "message_too_large"},
		{"not an image", imageMessage("look", "data:text/html;base64,PGI+aGk8L2I+").Parts, http.StatusBadRequest, "invalid_attachment"},
		{"not a data URL", imageMessage("look", "https://example.com/a.png").Parts, http.StatusBadRequest, "invalid_attachment"},
		{"bad base64", imageMessage("look", "data:image/png;base64,%%%").Parts, http.StatusBadRequest, "invalid_attachment"},
		{"unknown part", []api.MessagePart{{Type: "audio", Text: "x"}}, http.StatusBadRequest, "unsupported_part"},
	}
	for _, c := range cases {
		body, _ := json.Marshal(api.ChatRequest{GeneralSessionID: sid, Message: api.Message{Parts: c.parts}})
		code, eb := doJSON(t, e, http.MethodPost, "/v1/chat", string(body), nil)
		if code != c.status || eb.Error.Code != c.code || eb.Error.Message == "" {
			t.Errorf("%s: %d %+v, want %d %s", c.name, code, eb.Error, c.status, c.code)
		}
	}
	if n := len(e.upstream.Requests()); n != 0 {
		t.Fatalf("%d model requests after refused messages", n)
	}
}

// TestImageRefusedByTheModel: a model server that refuses a request with an
// image (a model that does not read images) ends the turn with
// images_unsupported, which says what to do.
func TestImageRefusedByTheModel(t *testing.T) {
	e := newEnv(t)
	e.upstream.Respond = func(r openai.ChatCompletionRequest) testpeer.Script {
		if _, images := imagesIn(r); len(images) > 0 {
			return testpeer.Script{Status: http.StatusBadRequest}
		}
		return testpeer.Script{Deltas: []string{"ok"}}
	}
	sid := e.session("j-noimg")
	var got collect
	if err := e.c.ChatStreamMessage(context.Background(), sid, imageMessage("what is this?", pngURL), func(ev api.StreamEvent) error { got.add(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	f := failure(got.all())
	if f == nil || f.Code != "images_unsupported" || !strings.Contains(f.Message, "test-model") || !strings.Contains(f.Message, "vision model") {
		t.Fatalf("failure %+v", f)
	}
}
