package config_test

import (
	"testing"

	"jarvis/service/config"
)

// FuzzParse: any bytes give a config or an error naming the file, never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"agents":[{"agentId":"a","displayName":"A"}]}`, `{"agents":[{"agentId":"a","toolAllowlist":["["]}]}`,
		"{\n\"providers\":{\"openai\":{\"model\":1}}}", `{"defaultProvider":"x"}`, `[`, `{"agents":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := config.Parse("f.json", b)
		if err != nil {
			if len(err.Error()) < len("f.json") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if len(c.Agents) == 0 || c.MaxBodyBytes <= 0 {
			t.Fatalf("valid config without defaults: %+v", c)
		}
	})
}
