//go:build !e2e

package main

import (
	"context"
	"time"

	"jarvis/app"
)

// hooks is the seam for the in-window self-test (main_e2e.go); in normal
// builds every hook does nothing, so production binaries carry none of it.
type hooks struct{}

func newHooks(*launch, time.Time) (*hooks, error) { return &hooks{}, nil }
func (*hooks) attach(*app.App, *app.Runner)       {}
func (*hooks) service(string, string)             {}
func (*hooks) startup(context.Context)            {}
func (*hooks) domReady(context.Context)           {}
func (*hooks) bind() []any                        { return nil }
func (*hooks) exitCode() int                      { return 0 }
func (*hooks) close()                             {}
