package app

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"jarvis/internal/instance"
)

// OneInstance takes dataDir's lock before anything opens the database.
// When another Jarvis holds it: a headless launch is done (the other runs
// the tasks); a window asks a headless holder to give way, or else hands
// its arguments to the other window (which comes to the front) and is
// done.
func OneInstance(dataDir string, headless bool, args []string, log *slog.Logger) (lock *instance.Lock, done bool, err error) {
	lock, err = instance.Acquire(dataDir)
	if err == nil || !errors.Is(err, instance.ErrRunning) {
		return lock, err != nil, err
	}
	if headless {
		// The window (or another headless) runs the tasks; the systemd unit
		// starts this one again later.
		return nil, true, fmt.Errorf("%v: it runs the tasks; this headless process exits", err)
	}
	if AskToYield(dataDir) { // a headless process running tasks gives way to the window
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if lock, err = instance.Acquire(dataDir); err == nil {
				log.Info("the headless Jarvis running tasks gave way to this window", "data_dir", dataDir)
				return lock, false, nil
			}
		}
	}
	// The first instance may hold the lock a moment before its window
	// answers on the bus: retry briefly.
	var herr error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if herr = instance.Handover(instance.UniqueID(dataDir), args); herr == nil {
			log.Info("Jarvis is already running with this data dir: its window was brought to the front and given this launch's arguments",
				"data_dir", dataDir, "args", args)
			return nil, true, nil
		}
		if errors.Is(herr, instance.ErrNoBus) {
			break // waiting will not bring a bus
		}
	}
	return nil, true, fmt.Errorf("%v; its window could not be brought to the front: %v", err, herr)
}
