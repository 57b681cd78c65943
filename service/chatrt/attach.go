package chatrt

// Attachments of a chat message (POST /v1/chat): text parts and images as
// data URLs (api/attach.go). The images are kept with the user's message
// (its meta) and sent to the model as image content parts on every turn
// that still carries the message.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"jarvis/api"
	"jarvis/service/httpapi"
)

// imageTypes are the images models that read images take.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// MaxChatBody is POST /v1/chat's body cap: a message of MaxMessageBytes in
// base64, and its JSON.
const MaxChatBody = api.MaxMessageBytes/3*4 + 1<<20

// MessageParts checks a chat message's parts and returns its text and its
// images (data URLs).
func MessageParts(parts []api.MessagePart) (text string, images []string, err error) {
	var b strings.Builder
	total := 0
	for i, p := range parts {
		field := fmt.Sprintf("message.parts[%d]", i)
		size := 0
		switch p.Type {
		case api.PartText:
			size = len(p.Text)
			b.WriteString(p.Text)
		case api.PartImage:
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return "", nil, httpapi.Missing(field + ".image_url.url")
			}
			if size, err = imageSize(p.ImageURL.URL); err != nil {
				return "", nil, httpapi.Errorf(http.StatusBadRequest, "invalid_attachment", "%s: %v", field, err).With("field", field)
			}
			images = append(images, p.ImageURL.URL)
		default:
			return "", nil, httpapi.Errorf(http.StatusBadRequest, "unsupported_part", "%s: type %q is not supported (only \"text\" and \"image_url\")", field, p.Type).With("field", "message.parts")
		}
		if size > api.MaxAttachmentBytes {
			return "", nil, httpapi.Errorf(http.StatusRequestEntityTooLarge, "attachment_too_large", "%s is %.1f MB; an attachment may have at most %d MB", field, float64(size)/(1<<20), api.MaxAttachmentBytes>>20).With("field", field)
		}
		if total += size; total > api.MaxMessageBytes {
			return "", nil, httpapi.Errorf(http.StatusRequestEntityTooLarge, "message_too_large", "the message and its attachments pass %d MB; send fewer or smaller files", api.MaxMessageBytes>>20).With("field", "message.parts")
		}
	}
	return b.String(), images, nil
}

// imageSize checks a data URL of an image and returns its decoded size.
func imageSize(u string) (int, error) {
	head, data, ok := strings.Cut(u, ",")
	media, isBase64 := strings.CutSuffix(strings.TrimPrefix(head, "data:"), ";base64")
	if !ok || !strings.HasPrefix(head, "data:") || !isBase64 {
		return 0, fmt.Errorf("an image must be a base64 data URL (data:image/png;base64,...)")
	}
	if !imageTypes[strings.ToLower(media)] {
		return 0, fmt.Errorf("images of type %q are not supported (PNG, JPEG, GIF or WebP)", media)
	}
	n, err := base64.StdEncoding.Decode(make([]byte, base64.StdEncoding.DecodedLen(len(data))), []byte(data))
	if err != nil {
		return 0, fmt.Errorf("the image's base64 is invalid: %v", err)
	}
	return n, nil
}

// ImagesMeta is the meta of a user message with images; "" without.
func ImagesMeta(images []string) string {
	if len(images) == 0 {
		return ""
	}
	b, err := json.Marshal(struct {
		Images []string `json:"images"`
	}{images})
	if err != nil { // strings always encode
		panic(err)
	}
	return string(b)
}

// attachedFile is how the window puts a text file into a message: its name
// on a line of its own, then its content in a fence (frontend/src/attach.ts).
var attachedFile = regexp.MustCompile("(?m)^Attached file (.+):\n```")

// AttachmentSources are a message's attachments as untrusted sources
// (service/provenance): each text file by name, and its images.
func AttachmentSources(text string, images []string) []api.Source {
	var out []api.Source
	for _, m := range attachedFile.FindAllStringSubmatch(text, -1) {
		out = append(out, api.Source{Kind: "attachment", Name: m[1]})
	}
	if len(images) > 0 {
		out = append(out, api.Source{Kind: "attachment", Name: fmt.Sprintf("(%d image(s))", len(images))})
	}
	return out
}
