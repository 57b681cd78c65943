package childenv

import (
	"slices"
	"testing"
)

func TestScrub(t *testing.T) {
	env := []string{"PATH=/bin", "JARVIS_TOKEN=t", "jarvis_token=t", "JARVIS_SECRET_OPENAI=s", "Jarvis_Secret_x=s",
		"JARVIS_PLAIN=v", "ANTHROPIC_API_KEY=k", "GITHUB_TOKEN=g", "DB_PASSWORD=p", "NOEQUALS"}
	if got, want := Scrub(env, JarvisSecrets), []string{"PATH=/bin", "JARVIS_PLAIN=v", "ANTHROPIC_API_KEY=k", "GITHUB_TOKEN=g", "DB_PASSWORD=p", "NOEQUALS"}; !slices.Equal(got, want) {
		t.Errorf("JarvisSecrets: %q, want %q", got, want)
	}
	if got, want := Scrub(env, AllCredentials), []string{"PATH=/bin", "JARVIS_PLAIN=v", "NOEQUALS"}; !slices.Equal(got, want) {
		t.Errorf("AllCredentials: %q, want %q", got, want)
	}
}
