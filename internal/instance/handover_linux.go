package instance

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/godbus/dbus/v5"
)

// Handover sends args and the working directory to the first instance's
// window: the JSON of Wails' options.SecondInstanceData to the method
// SendMessage of the D-Bus name that Wails' SingleInstanceLock (Linux)
// exports for uniqueID. It fails when there is no session bus or no window
// answers (the first instance may still be starting its window).
func Handover(uniqueID string, args []string) error {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		if d := os.Getenv("XDG_RUNTIME_DIR"); d == "" || !exists(d+"/bus") {
			return ErrNoBus
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = ""
	}
	msg, err := json.Marshal(struct {
		Args             []string
		WorkingDirectory string
	}{Args: args, WorkingDirectory: wd})
	if err != nil {
		return err
	}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return err
	}
	defer conn.Close()
	// The naming is Wails v2's (the single-instance lock of its Linux desktop frontend).
	id := "wails_app_" + strings.ReplaceAll(strings.ReplaceAll(uniqueID, "-", "_"), ".", "_")
	name, path := "org."+id+".SingleInstance", dbus.ObjectPath("/org/"+id+"/SingleInstance")
	return conn.Object(name, path).Call(name+".SendMessage", 0, string(msg)).Store()
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }
