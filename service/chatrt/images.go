package chatrt

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"jarvis/api"
	"jarvis/service/llm"
	"jarvis/service/turn"
)

// imageTokens is what an image counts toward the context budget: about what
// vision models charge for a picture of a few hundred pixels a side.
const imageTokens = 1000

// hasImages says whether a request of c carries images.
func (c *convo) hasImages() bool {
	for _, e := range c.entries {
		if len(e.msg.Images) > 0 {
			return true
		}
	}
	return false
}

// imagesRefused is the failure of a request with images that the model
// server refused: most likely a model that does not read images.
func imagesRefused(model string, le *llm.Error) turn.Outcome {
	return turn.Failed("images_unsupported", "The model %s refused a message with an image; it may not read images (the server said: %s). Choose a model that does (a vision model) in the model switch, or send the message without the image.", model, le.Message)
}

// toolImages are the images of a tool's result a model can be sent, as
// data URLs: PNG, JPEG, GIF or WebP whose base64 is valid, within the caps
// of a message's attachments. Audio, and images beyond the caps, stay
// named in the result's text only.
func toolImages(r api.ToolResult) []string {
	if !r.OK {
		return nil
	}
	var out []string
	total := 0
	for _, m := range r.Media {
		if m.Type != "image" || !imageTypes[strings.ToLower(m.MIMEType)] {
			continue
		}
		n := base64.StdEncoding.DecodedLen(len(m.Data))
		if _, err := base64.StdEncoding.DecodeString(m.Data); err != nil || n > api.MaxAttachmentBytes || total+n > api.MaxMessageBytes {
			continue
		}
		total += n
		out = append(out, m.DataURL())
	}
	return out
}

// maxToolAudio caps the audio of one tool result kept with it for the
// window (each clip and their sum): audio never goes to a model, so it is
// stored only to show the card again when the conversation is reopened.
const maxToolAudio = 5 << 20

// toolAudio is the audio of a tool's result kept with its message, as data
// URLs: clips of an audio/* type whose base64 is valid, within
// maxToolAudio. Larger clips are shown live only.
func toolAudio(r api.ToolResult) []string {
	if !r.OK {
		return nil
	}
	var out []string
	total := 0
	for _, m := range r.Media {
		mt := strings.ToLower(m.MIMEType)
		if m.Type != "audio" || !strings.HasPrefix(mt, "audio/") || strings.ContainsAny(mt, ";,") {
			continue
		}
		n := base64.StdEncoding.DecodedLen(len(m.Data))
		if _, err := base64.StdEncoding.DecodeString(m.Data); err != nil || total+n > maxToolAudio {
			continue
		}
		total += n
		out = append(out, "data:"+mt+";base64,"+m.Data)
	}
	return out
}

// toolMediaMeta is the meta of a tool message with images (sent to models
// that read them, and shown on the card) and audio (the card only); ""
// without. Media stay out of the message's text, which is what the search
// index and the text's size budget see.
func toolMediaMeta(images, audio []string) string {
	if len(audio) == 0 {
		return ImagesMeta(images)
	}
	b, err := json.Marshal(struct {
		Images []string `json:"images,omitempty"`
		Audio  []string `json:"audio"`
	}{images, audio})
	if err != nil { // strings always encode
		panic(err)
	}
	return string(b)
}

// toolImagesLeftOut ends a tool result whose images a model refused.
const toolImagesLeftOut = "\n[Jarvis: the model was not sent this result's images: it refused a request with images.]"

// dropToolImages leaves the tools' images out of c (a model that refused a
// request with them: most likely one that does not read images) and says
// so in each such result; false when c had none.
func (c *convo) dropToolImages() bool {
	dropped := false
	for i := range c.entries {
		e := &c.entries[i]
		if e.msg.Role == "tool" && len(e.msg.Images) > 0 {
			e.msg.Images = nil
			e.msg.Content += toolImagesLeftOut
			e.tokens = estimateMessage(e.msg)
			dropped = true
		}
	}
	return dropped
}
