package api

// Attachments of a chat message: images travel as OpenAI chat content parts,
// {"type":"image_url","image_url":{"url":"data:image/png;base64,..."}};
// a text file is a text part (the window puts its name and content in it).

const (
	PartText  = "text"
	PartImage = "image_url"

	// MaxAttachmentBytes caps one part (an image decoded, or a text part).
	MaxAttachmentBytes = 10 << 20
	// MaxMessageBytes caps all the parts of one message together.
	MaxMessageBytes = 20 << 20
)

// ImageURL is the image of an image_url part: a data URL of a PNG, JPEG,
// GIF or WebP image.
type ImageURL struct {
	URL string `json:"url"`
}
