package main

// The build's identity (--version, the About view) and the one-instance
// rule of the desktop binary (internal/instance), kept out of main.go.

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/wailsapp/wails/v2/pkg/options"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"jarvis/app"
	"jarvis/internal/instance"
)

// wailsJSON is the project file: its "info" names the product and version
// (the same values wails build writes into the macOS and Windows metadata).
//
//go:embed wails.json
var wailsJSON []byte

// commit is the source revision, set at build time with
// -ldflags "-X main.commit=<hash>" (make build and the documented wails build do).
var commit = "unknown"

// product returns the product name and version of wails.json.
func product() (name, version string) {
	var p struct {
		Info struct {
			ProductName    string `json:"productName"`
			ProductVersion string `json:"productVersion"`
		} `json:"info"`
	}
	if err := json.Unmarshal(wailsJSON, &p); err != nil || p.Info.ProductName == "" {
		return "Jarvis", "unknown"
	}
	return p.Info.ProductName, p.Info.ProductVersion
}

func versionLine() string {
	name, v := product()
	return fmt.Sprintf("%s %s (commit %s, %s, %s/%s)", name, v, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// aboutOptions is what the About view shows; keys without an OS keyring go
// next to the config file.
func aboutOptions(l *launch) app.AboutOptions {
	name, v := product()
	o := app.AboutOptions{Product: name, Version: v, Commit: commit, DataDir: l.dataDir, ConfigPath: l.configPath,
		SecretsFile: secretsFile(l)}
	if runtime.GOOS == "linux" {
		if d, err := os.UserConfigDir(); err == nil {
			o.AutostartDir = filepath.Join(d, "autostart")
		}
		o.Executable, _ = os.Executable()
	}
	return o
}

// secretsFile is where API keys go when no OS keyring answers.
func secretsFile(l *launch) string { return filepath.Join(filepath.Dir(l.configPath), "secrets.json") }

// oneInstance takes the data dir's lock before anything opens the database.
// When another Jarvis holds it, this launch hands its arguments to that
// window (which comes to the front) and is done.
func oneInstance(l *launch, args []string) (lock *instance.Lock, done bool, err error) {
	lock, err = instance.Acquire(l.dataDir)
	if err == nil || !errors.Is(err, instance.ErrRunning) {
		return lock, err != nil, err
	}
	if l.headless {
		// The window (or another headless) runs the tasks; the systemd unit
		// starts this one again later (main_inbox.go).
		return nil, true, fmt.Errorf("%v: it runs the tasks; this headless process exits", err)
	}
	if app.AskToYield(l.dataDir) { // a headless process running tasks gives way to the window
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if lock, err = instance.Acquire(l.dataDir); err == nil {
				l.log.Info("the headless Jarvis running tasks gave way to this window", "data_dir", l.dataDir)
				return lock, false, nil
			}
		}
	}
	// The first instance may hold the lock a moment before its window
	// answers on the bus: retry briefly.
	var herr error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if herr = instance.Handover(instance.UniqueID(l.dataDir), args); herr == nil {
			l.log.Info("Jarvis is already running with this data dir: its window was brought to the front and given this launch's arguments",
				"data_dir", l.dataDir, "args", args)
			return nil, true, nil
		}
		if errors.Is(herr, instance.ErrNoBus) {
			break // waiting will not bring a bus
		}
	}
	return nil, true, fmt.Errorf("%v; its window could not be brought to the front: %v", err, herr)
}

// singleInstance is Wails' lock for the first instance's window: a second
// launch (oneInstance) reaches it and the window comes to the front.
func singleInstance(l *launch, wctx *atomic.Pointer[context.Context], emit func(string, any)) *options.SingleInstanceLock {
	return &options.SingleInstanceLock{UniqueId: instance.UniqueID(l.dataDir), OnSecondInstanceLaunch: func(d options.SecondInstanceData) {
		l.log.Info("a second launch handed over to this window", "args", d.Args, "working_directory", d.WorkingDirectory)
		if c := wctx.Load(); c != nil {
			wruntime.WindowUnminimise(*c)
			wruntime.WindowShow(*c)
		}
		emit("app:second-instance", map[string]any{"args": d.Args, "workingDirectory": d.WorkingDirectory})
	}}
}
