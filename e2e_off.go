//go:build !e2e

package main

import (
	"context"
	"time"

	"jarvis/app"
)

// hooks is the seam for the in-window self-test (e2e_on.go); in normal
// builds every hook does nothing, so production binaries carry none of it.
type hooks struct{}

func newHooks(*launch, time.Time) (*hooks, error) { return &hooks{}, nil }
func (*hooks) Attach(*app.Runner)                 {}
func (*hooks) Service(string, string)             {}
func (*hooks) Startup(context.Context)            {}
func (*hooks) DomReady(context.Context)           {}
func (*hooks) Bind() []any                        { return nil }
func (*hooks) ExitCode() int                      { return 0 }
func (*hooks) Close()                             {}
