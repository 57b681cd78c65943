package layoutcheck

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// repoRoot is the directory holding go.mod, found upwards from the test's
// working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// skipDir reports directories that hold no code of ours: dependencies,
// build output, fixtures and hidden folders.
func skipDir(rel, name string) bool {
	return rel != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" ||
		name == "dist" || rel == "build/bin" || rel == "frontend/wailsjs")
}

// layout walks the repository and returns its Go package directories and
// its test folders (the folders under tests/, and frontend/test), as
// slash-separated paths relative to root ("." for the root package).
func layout(t *testing.T, root string) (pkgs, testDirs []string) {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			if parent := filepath.ToSlash(filepath.Dir(rel)); parent == "tests" || rel == "frontend/test" {
				testDirs = append(testDirs, rel)
			}
			return nil
		}
		if dir := filepath.ToSlash(filepath.Dir(rel)); strings.HasSuffix(p, ".go") && !seen[dir] {
			seen[dir] = true
			pkgs = append(pkgs, dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs, testDirs
}

// tableNames returns the names AGENTS.md's table gives in its first column:
// every `code span` of a row's first cell, without a trailing slash. A name
// ending in "/*" stands for every directory below it.
func tableNames(t *testing.T, agentsMD string) (names []string) {
	t.Helper()
	f, err := os.Open(agentsMD)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	span := regexp.MustCompile("`([^`]+)`")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cell := strings.SplitN(line[2:], " |", 2)[0]
		for _, m := range span.FindAllStringSubmatch(cell, -1) {
			names = append(names, strings.TrimSuffix(m[1], "/"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// listed reports whether dir has a row: named itself, or below a "x/*" name.
// The root package is the row of main.go.
func listed(names []string, dir string) bool {
	if dir == "." {
		dir = "main.go"
	}
	for _, n := range names {
		if n == dir || strings.HasSuffix(n, "/*") && strings.HasPrefix(dir, strings.TrimSuffix(n, "*")) {
			return true
		}
	}
	return false
}

// Every Go package directory and every test folder has a row in AGENTS.md,
// the architecture map a newcomer starts from.
func TestAgentsMDListsEveryPackageAndTestFolder(t *testing.T) {
	root := repoRoot(t)
	names := tableNames(t, filepath.Join(root, "AGENTS.md"))
	if len(names) == 0 {
		t.Fatal("AGENTS.md has no table rows naming packages")
	}
	pkgs, tests := layout(t, root)
	if !slices.Contains(pkgs, "service") || !slices.Contains(tests, "tests/security") {
		t.Fatalf("the walk missed known folders (packages %v, test folders %v)", pkgs, tests)
	}
	for _, dir := range slices.Compact(slices.Sorted(slices.Values(append(pkgs, tests...)))) {
		if !listed(names, dir) {
			t.Errorf("AGENTS.md's table has no row for %s: add one saying what it owns", dir)
		}
	}
}

// goFileRef is a Go file named in a comment, as a bare name or a path from
// the root; not a JavaScript path such as window.go.main.
var goFileRef = regexp.MustCompile(`(?:^|[^\w/.-])((?:[\w-]+/)*[\w-]+\.go)(?:$|[^\w.?])`)

// Every Go file a comment names exists: a bare name in the comment's own
// directory or at the root, a path relative to the root.
func TestCommentsNameExistingFiles(t *testing.T) {
	root := repoRoot(t)
	pkgs, _ := layout(t, root)
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		return err == nil
	}
	checked := 0
	for _, dir := range pkgs {
		files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				_, comment, ok := strings.Cut(line, "//")
				if !ok {
					continue
				}
				for _, m := range goFileRef.FindAllStringSubmatch(comment, -1) {
					ref := m[1]
					checked++
					if strings.Contains(ref, "/") && exists(ref) || !strings.Contains(ref, "/") && (exists(dir+"/"+ref) || exists(ref)) {
						continue
					}
					rel, _ := filepath.Rel(root, file)
					t.Errorf("%s:%d: the comment names %s, which does not exist", filepath.ToSlash(rel), i+1, ref)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no comment named a Go file: the scan is broken")
	}
}
