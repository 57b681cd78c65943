// Command jarvis-package builds the Debian package of the desktop app with
// nfpm (github.com/goreleaser/nfpm/v2): the binary, the desktop entry and
// AppStream metainfo of build/linux (templates filled from wails.json's
// "info", the fields wails build fills into the macOS and Windows files), and
// the icon in the hicolor theme at every size of build/linux/icons plus the
// SVG. It depends on the runtime libraries (WebKitGTK 4.1, GTK 3), not on
// their -dev packages.
//
//	go run ./cmd/jarvis-package --bin build/bin/jarvis --out build/bin
//
// It prints the path of the .deb it wrote. SOURCE_DATE_EPOCH, when set,
// fixes the release date and the files' times (a reproducible package).
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"text/template"
	"time"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"
)

// AppID is the reverse-DNS id of the desktop entry and the AppStream component.
const AppID = "org.jarvis.Jarvis"

// Depends are the runtime libraries the binary links (webkit2_41 build).
var depends = []string{"libwebkit2gtk-4.1-0", "libgtk-3-0", "libc6"}

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Getenv, time.Now); err != nil {
		fmt.Fprintln(os.Stderr, "jarvis-package:", err)
		os.Exit(1)
	}
}

// project is the part of wails.json the package needs.
type project struct {
	Name           string `json:"name"`
	OutputFilename string `json:"outputfilename"`
	Info           struct {
		CompanyName    string `json:"companyName"`
		ProductName    string `json:"productName"`
		ProductVersion string `json:"productVersion"`
		Copyright      string `json:"copyright"`
		Comments       string `json:"comments"`
	} `json:"info"`
}

func run(args []string, stdout io.Writer, getenv func(string) string, now func() time.Time) error {
	fs := flag.NewFlagSet("jarvis-package", flag.ContinueOnError)
	bin := fs.String("bin", "build/bin/jarvis", "the desktop binary to package")
	helper := fs.String("confine", "", "the confinement helper to package next to it (default: jarvis-confine beside --bin)")
	out := fs.String("out", "build/bin", "directory the .deb is written to")
	wailsJSON := fs.String("project", "wails.json", "the Wails project file (name, version)")
	assets := fs.String("assets", "build", "the Wails build assets folder (linux/, icon/)")
	arch := fs.String("arch", runtime.GOARCH, "Debian architecture of the binary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*wailsJSON)
	if err != nil {
		return err
	}
	var p project
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("%s: %w", *wailsJSON, err)
	}
	if p.Info.ProductName == "" || p.Info.ProductVersion == "" || p.OutputFilename == "" {
		return fmt.Errorf("%s: info.productName, info.productVersion and outputfilename are required", *wailsJSON)
	}
	if fi, err := os.Stat(*bin); err != nil || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable (run make build first): %v", *bin, err)
	}
	if *helper == "" {
		*helper = filepath.Join(filepath.Dir(*bin), "jarvis-confine")
	}
	if fi, err := os.Stat(*helper); err != nil || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable (run make build first): %v", *helper, err)
	}
	mtime := now().UTC()
	if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH: %w", err)
		}
		mtime = time.Unix(sec, 0).UTC()
	}

	tmp, err := os.MkdirTemp("", "jarvis-package-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	data := struct {
		project
		Date string
	}{p, mtime.Format("2006-01-02")}
	desktop := filepath.Join(tmp, AppID+".desktop")
	metainfo := filepath.Join(tmp, AppID+".metainfo.xml")
	if err := render(filepath.Join(*assets, "linux", "jarvis.desktop"), desktop, data); err != nil {
		return err
	}
	if err := render(filepath.Join(*assets, "linux", "jarvis.metainfo.xml"), metainfo, data); err != nil {
		return err
	}

	file := func(src, dst string, mode os.FileMode) *files.Content {
		return &files.Content{Source: src, Destination: dst, FileInfo: &files.ContentFileInfo{Mode: mode, MTime: mtime}}
	}
	contents := files.Contents{
		file(*bin, "/usr/bin/"+p.OutputFilename, 0o755),
		// The sandbox's helper, beside the binary (tools.SmallHelper).
		file(*helper, "/usr/bin/jarvis-confine", 0o755),
		file(desktop, "/usr/share/applications/"+AppID+".desktop", 0o644),
		file(metainfo, "/usr/share/metainfo/"+AppID+".metainfo.xml", 0o644),
		file(filepath.Join(*assets, "icon", "jarvis.svg"), "/usr/share/icons/hicolor/scalable/apps/jarvis.svg", 0o644),
	}
	sizes, err := filepath.Glob(filepath.Join(*assets, "linux", "icons", "*x*", "jarvis.png"))
	if err != nil {
		return err
	}
	if len(sizes) == 0 {
		return errors.New("no icons in " + filepath.Join(*assets, "linux", "icons") + " (run build/icon/render.sh)")
	}
	sort.Strings(sizes)
	for _, png := range sizes {
		size := filepath.Base(filepath.Dir(png))
		contents = append(contents, file(png, "/usr/share/icons/hicolor/"+size+"/apps/jarvis.png", 0o644))
	}

	info := nfpm.WithDefaults(&nfpm.Info{
		Name: p.Name, Arch: *arch, Platform: "linux", Version: p.Info.ProductVersion,
		Section: "utils", Priority: "optional", Maintainer: p.Info.CompanyName + " <dev@jarvis.local>",
		Vendor: p.Info.CompanyName, Homepage: "https://github.com/jarvis-desktop/jarvis",
		Description: p.Info.ProductName + ": " + p.Info.Comments + "\n" +
			"Each action on the computer passes a safety gate the user answers and is written\n" +
			"to a hash-chained audit log. Works with a local OpenAI-compatible server or OpenAI.",
		MTime: mtime,
		Overridables: nfpm.Overridables{
			Depends: depends,
			// bubblewrap gives the sandbox of the programs Jarvis starts its
			// namespaces (tools/confine.go); without it the prompt says which
			// protections are missing.
			Recommends: []string{"bubblewrap"},
			Suggests:   []string{"gnome-keyring"},
			Contents:   contents,
		},
	})
	if err := nfpm.Validate(info); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	target := filepath.Join(*out, deb.Default.ConventionalFileName(info))
	f, err := os.Create(target)
	if err != nil {
		return err
	}
	if err := deb.Default.Package(info, f); err != nil {
		f.Close()
		os.Remove(target)
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, target)
	return nil
}

// render fills the template src (Wails' field names: .Info.ProductName,
// .Info.ProductVersion, .Info.Comments; and .Date) into dst.
func render(src, dst string, data any) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	t, err := template.New(filepath.Base(src)).Option("missingkey=error").Parse(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return os.WriteFile(dst, out.Bytes(), 0o644)
}
