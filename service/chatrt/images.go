package chatrt

import (
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
