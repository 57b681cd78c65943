package app

import (
	"strings"
	"testing"
)

// "Copy diagnostics" says what a problem report needs (version, system,
// kernel, sandbox, where the service runs, whether a model is set up) and
// nothing secret: not the service's token, address or port.
func TestDiagnosticsSayWhatHelpsAndNothingSecret(t *testing.T) {
	d := newRealDesktop(t, 30, "")
	d.app.about = AboutOptions{Product: "Jarvis", Version: "1.2.3", Commit: "abc1234", DataDir: "/home/ada/.local/share/jarvis"}
	text := d.app.Diagnostics()
	for _, want := range []string{"Jarvis 1.2.3 (commit abc1234)", "System: ", "Kernel: ", "Sandbox:\n", "Service: on this computer (loopback)", "Model set up: yes"} {
		if !strings.Contains(text, want) {
			t.Fatalf("diagnostics lack %q:\n%s", want, text)
		}
	}
	base := d.c.BaseURL()
	port := base[strings.LastIndex(base, ":")+1:]
	for _, secret := range []string{realToken, base, ":" + port, "/home/ada"} {
		if strings.Contains(text, secret) {
			t.Fatalf("diagnostics give away %q:\n%s", secret, text)
		}
	}
	if a := d.app.About(); a.License != "MIT" || !strings.HasPrefix(a.Homepage, "https://") || a.Issues == "" {
		t.Fatalf("About without licence or links: %+v", a)
	}
}
