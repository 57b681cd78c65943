package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The packager builds a .deb of a stand-in binary from the repository's own
// build/ assets and wails.json; dpkg-deb (when installed) reads back the
// control fields and the file list. scripts/package-test.sh does the rest
// with the real binary.
func TestPackageFromRepoAssets(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "jarvis")
	if err := os.WriteFile(filepath.Join(dir, "jarvis-confine"), []byte("#!/bin/sh\necho stand-in\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho stand-in\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	env := map[string]string{"SOURCE_DATE_EPOCH": "1767268800"} // 2026-01-01 12:00 UTC: the same day in every time zone
	err := run([]string{"--bin", bin, "--out", dir, "--project", "../../wails.json", "--assets", "../../build", "--arch", "amd64"},
		&out, func(k string) string { return env[k] }, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	deb := strings.TrimSpace(out.String())
	if !strings.HasPrefix(filepath.Base(deb), "jarvis_") || !strings.HasSuffix(deb, "_amd64.deb") {
		t.Fatalf("package name %q", deb)
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("dpkg-deb not installed")
	}
	ctl, err := exec.Command("dpkg-deb", "--field", deb, "Package", "Depends", "Recommends").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, ctl)
	}
	if !strings.Contains(string(ctl), "Package: jarvis") || !strings.Contains(string(ctl), "libwebkit2gtk-4.1-0") || !strings.Contains(string(ctl), "Recommends: bubblewrap") || strings.Contains(string(ctl), "-dev") {
		t.Fatalf("control:\n%s", ctl)
	}
	list, err := exec.Command("dpkg-deb", "--contents", deb).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"./usr/bin/jarvis", "./usr/bin/jarvis-confine", "./usr/share/applications/org.jarvis.Jarvis.desktop", "./usr/share/metainfo/org.jarvis.Jarvis.metainfo.xml",
		"./usr/share/icons/hicolor/512x512/apps/jarvis.png", "./usr/share/icons/hicolor/scalable/apps/jarvis.svg", "2026-01-01"} {
		if !strings.Contains(string(list), f) {
			t.Errorf("the package lacks %s:\n%s", f, list)
		}
	}
	// The templates are filled: no Wails field is left unexpanded.
	x := t.TempDir()
	if b, err := exec.Command("dpkg", "-x", deb, x).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, b)
	}
	for _, f := range []string{"usr/share/applications/org.jarvis.Jarvis.desktop", "usr/share/metainfo/org.jarvis.Jarvis.metainfo.xml"} {
		b, _ := os.ReadFile(filepath.Join(x, f))
		if bytes.Contains(b, []byte("{{")) || !bytes.Contains(b, []byte("Jarvis")) {
			t.Errorf("%s:\n%s", f, b)
		}
	}
}

// A project file without the info the package needs is a clear error.
func TestPackageNeedsInfo(t *testing.T) {
	dir := t.TempDir()
	pj := filepath.Join(dir, "wails.json")
	os.WriteFile(pj, []byte(`{"name":"jarvis","outputfilename":"jarvis"}`), 0o644)
	err := run([]string{"--project", pj, "--out", dir}, &bytes.Buffer{}, func(string) string { return "" }, time.Now)
	if err == nil || !strings.Contains(err.Error(), "info.productName") {
		t.Fatalf("err = %v", err)
	}
}
