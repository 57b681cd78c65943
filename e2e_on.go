//go:build e2e

package main

// The e2e build's self-test (internal/e2e), given the window's functions:
// only this package imports Wails.

import (
	_ "embed"
	"time"

	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"jarvis/internal/e2e"
)

//go:embed frontend/e2e/selftest.js
var selftestJS string

type hooks struct{ *e2e.Harness }

func newHooks(l *launch, started time.Time) (*hooks, error) {
	h, err := e2e.New(e2e.Launch{DataDir: l.dataDir, ConfigPath: l.configPath, Getenv: l.getenv, Started: started, Selftest: selftestJS,
		Window: e2e.Window{ExecJS: wruntime.WindowExecJS, Quit: wruntime.Quit, SetSize: wruntime.WindowSetSize, SetPosition: wruntime.WindowSetPosition}})
	if err != nil {
		return nil, err
	}
	l.noDialogs, l.config = true, h.Config()
	return &hooks{h}, nil
}
