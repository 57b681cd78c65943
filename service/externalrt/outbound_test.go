package externalrt

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/netguard"
	"jarvis/service/proxy"
	"jarvis/service/redact"
	"jarvis/service/turn"
)

// TestOutboundURLsUseOneClassifier: external agents' inputUrl and proxy
// agents' url are refused when they name an address the classifier
// refuses, and the clients that call them refuse such an address at dial
// time too (a name that resolves, or re-resolves, to it).
func TestOutboundURLsUseOneClassifier(t *testing.T) {
	refused := []string{"169.254.169.254", "[::a9fe:a9fe]", "[2002:a9fe:a9fe::]", "[64:ff9b::a9fe:a9fe]", "192.0.0.1", "0.0.0.0", "[::ffff:169.254.169.254]"}
	for _, host := range refused {
		u := "http://" + host + "/in"
		a := config.Agent{AgentID: "x", Type: config.TypeExternal, External: []byte(fmt.Sprintf(`{"inputUrl":%q}`, u))}
		if _, err := parseExternalSettings(a); err == nil {
			t.Errorf("external inputUrl %s accepted", u)
		}
		if err := (proxy.Definition{URL: u}).Validate(); err == nil {
			t.Errorf("proxy url %s accepted", u)
		}
	}
	for _, host := range []string{"127.0.0.1:9", "[::1]:9", "10.0.0.1:9", "agent.example:9"} {
		a := config.Agent{AgentID: "x", Type: config.TypeExternal, External: []byte(fmt.Sprintf(`{"inputUrl":"http://%s/in"}`, host))}
		if _, err := parseExternalSettings(a); err != nil {
			t.Errorf("external inputUrl on %s refused: %v", host, err)
		}
	}

	rt := New(turn.Env{HTTPClient: &http.Client{}, Config: func() *config.Config { return &config.Config{} }}, &callback.Base{}, &redact.Set{})
	clients := map[string]*http.Client{"external": rt.hc, "proxy": proxy.NewHTTPClient()}
	for name, c := range clients {
		for _, host := range refused {
			req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://"+host+":9/", nil)
			resp, err := c.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, netguard.ErrRefused) {
				t.Errorf("%s client dialling %s: %v, want netguard.ErrRefused", name, host, err)
			}
		}
	}
}
