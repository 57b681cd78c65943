package backup

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"jarvis/app/audit"
)

// CommandOptions is what the root gives the backup, restore and export commands.
type CommandOptions struct {
	Paths   func() (Paths, error) // where this user's Jarvis keeps its data
	Keyring audit.KeyStore        // the audit chain key's keyring (nil: the key file)
	Stdout  io.Writer
	Stderr  io.Writer
}

// Command runs `jarvis backup FILE`, `jarvis restore [--force] FILE` or
// `jarvis export [--format md|json] FILE` (args[0] names which) and returns
// the exit code.
func Command(args []string, o CommandOptions) int {
	ctx := context.Background()
	fail := func(format string, a ...any) int {
		fmt.Fprintf(o.Stderr, "jarvis %s: %s\n", args[0], fmt.Sprintf(format, a...))
		return 1
	}
	fs := flag.NewFlagSet("jarvis "+args[0], flag.ContinueOnError)
	fs.SetOutput(o.Stderr)
	dataDir := fs.String("data-dir", "", "data directory (default: the platform data dir)")
	force := false
	format := "md"
	switch args[0] {
	case "restore":
		fs.BoolVar(&force, "force", false, "replace the files that are already there")
	case "export":
		fs.StringVar(&format, "format", "md", "md (Markdown) or json")
	}
	fs.Usage = func() {
		fmt.Fprintf(o.Stderr, "usage: jarvis %s [flags] FILE\n", args[0])
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	file := fs.Arg(0)
	p, err := o.Paths()
	if err != nil {
		return fail("%v", err)
	}
	if *dataDir != "" {
		p.DataDir = *dataDir
	}
	switch args[0] {
	case "backup":
		m, err := Backup(ctx, p, file)
		if err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(o.Stdout, "Backed up %d files to %s.\n", len(m.Files), file)
		fmt.Fprintln(o.Stdout, "Not in the backup:")
		for _, l := range m.LeftOut {
			fmt.Fprintln(o.Stdout, "  -", l)
		}
		return 0
	case "restore":
		r, err := Restore(ctx, p, file, force)
		if err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(o.Stdout, "Restored %d files from %s (made %s).\n", len(r.Files), file, r.Manifest.CreatedAt)
		if msg, ok := VerifyAudit(ctx, p, o.Keyring); ok {
			fmt.Fprintln(o.Stdout, msg)
		} else {
			fmt.Fprintln(o.Stderr, msg)
			return 1
		}
		return 0
	case "export":
		n, err := Export(ctx, filepath.Join(p.DataDir, "jarvis.db"), format, file)
		if err != nil {
			return fail("%v", err)
		}
		fmt.Fprintf(o.Stdout, "Exported %d conversations to %s.\n", n, file)
		return 0
	}
	return fail("unknown command")
}

// VerifyAudit checks the restored audit log against its chain key and
// anchor and says so in plain words; ok is false when it does not verify.
func VerifyAudit(ctx context.Context, p Paths, keyring audit.KeyStore) (msg string, ok bool) {
	path := filepath.Join(p.DataDir, "audit.db")
	if _, err := os.Stat(path); err != nil {
		return "The backup had no audit log.", true
	}
	l, err := audit.Open(path, audit.Options{KeyDir: p.AuditKeyDir, Keyring: keyring})
	if err != nil {
		return fmt.Sprintf("The audit log was restored but cannot be checked: %v. Its chain key travels apart from the backup (docs/guide/data.md).", err), false
	}
	defer l.Close()
	rep, err := l.Verify(ctx)
	if err != nil {
		return fmt.Sprintf("The audit log was restored but cannot be checked: %v.", err), false
	}
	if !rep.OK {
		return fmt.Sprintf("The audit log was restored but does not verify (%s, row %d): is this machine's audit key the one it was written with? (docs/guide/data.md)", rep.Reason, rep.FirstBadID), false
	}
	return fmt.Sprintf("The audit log verifies: %d rows.", rep.Rows), true
}
