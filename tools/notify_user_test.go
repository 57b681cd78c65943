package tools

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// TestNotifyUser: the window's own notification runs the notify tool's
// helper with the texts as they are (no "From <agent>" prefix: no agent
// sent it), and says plainly when the system has no helper.
func TestNotifyUser(t *testing.T) {
	bin := newFakeBin(t, helperNames...)
	x := newExec(t, t.TempDir(), bin, func(o *Options) { o.GOOS = "linux" })
	if err := x.NotifyUser(context.Background(), "Jarvis: reply ready", "Plan a picnic"); err != nil {
		t.Fatal(err)
	}
	want := []string{"notify-send", "--app-name=Jarvis", "--", "Jarvis: reply ready", "Plan a picnic"}
	if a := bin.argv("notify-send"); !reflect.DeepEqual(a, want) {
		t.Fatalf("argv = %q, want %q", a, want)
	}
	w := newExec(t, t.TempDir(), bin, func(o *Options) { o.GOOS = "windows" })
	if err := w.NotifyUser(context.Background(), "t", "b"); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("windows: %v", err)
	}
}
