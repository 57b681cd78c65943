package api

// ProviderTest answers POST /v1/providers/test: what the provider's server
// said when asked for its models, in plain words.
type ProviderTest struct {
	OK bool `json:"ok"`
	// Kind: ok | unreachable | timeout | auth | not_openai | model_missing | no_key.
	Kind    string   `json:"kind"`
	Message string   `json:"message"`
	BaseURL string   `json:"baseUrl"`
	Models  []string `json:"models,omitempty"`
}
