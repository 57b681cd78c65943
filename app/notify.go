package app

// The window's own desktop notification: a long reply that finished while
// the window was in the background (frontend/src/notify.ts decides when).
// Wails has no notification API and a browser permission prompt would be
// out of place, so it goes through the notify tool's helper (notify-send,
// osascript), without the gate: the model asked for nothing.

import (
	"context"
	"errors"
	"unicode/utf8"
)

// userNotifier is the tool runner's side of it (*Runner).
type userNotifier interface {
	NotifyUser(ctx context.Context, title, body string) error
}

// NotifyUser shows a desktop notification; body is cut to 200 characters.
func (a *App) NotifyUser(title, body string) error {
	n, ok := a.tools.(userNotifier)
	if !ok {
		return errors.New("this window cannot show desktop notifications")
	}
	if utf8.RuneCountInString(body) > 200 {
		body = string([]rune(body)[:199]) + "…"
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	return n.NotifyUser(ctx, title, body)
}

// NotifyUser shows a desktop notification from Jarvis itself.
func (r *Runner) NotifyUser(ctx context.Context, title, body string) error {
	return r.x.NotifyUser(ctx, title, body)
}
