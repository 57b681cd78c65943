package app

// Messages with images attached in the window (frontend/src/attach.ts):
// the images travel as image_url parts of POST /v1/chat; attached text
// files are already part of the text.

import (
	"errors"
	"strings"

	"jarvis/api"
)

// SendWithImages sends text with images (data URLs). The service checks the
// images and their sizes; its refusal arrives as a send:error event.
func (a *App) SendWithImages(sessionID, text string, images []string) error {
	if strings.TrimSpace(text) == "" && len(images) == 0 {
		return errors.New("the message is empty")
	}
	m := api.Message{}
	if text != "" {
		m.Parts = append(m.Parts, api.MessagePart{Type: api.PartText, Text: text})
	}
	for _, u := range images {
		m.Parts = append(m.Parts, api.MessagePart{Type: api.PartImage, ImageURL: &api.ImageURL{URL: u}})
	}
	return a.sendMessage(sessionID, m)
}
