package layoutcheck

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/internal/cli"
	"jarvis/service"
	"jarvis/service/config"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// markdownFiles returns the project's own Markdown files, relative to root.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			n := d.Name()
			if rel != "." && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata" || n == "dist" || rel == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	linkRe    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRe = regexp.MustCompile(`(?m)^#{1,6} +(.+?)\s*$`)
	fenceRe   = regexp.MustCompile("(?ms)^```.*?^```")
)

// anchors returns the GitHub-style anchors of a Markdown file's headings.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range headingRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(text, ""), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		for i := 0; ; i++ { // a repeated heading gets -1, -2, ...
			k := a
			if i > 0 {
				k = a + "-" + strconv.Itoa(i)
			}
			if !out[k] {
				out[k] = true
				break
			}
		}
	}
	return out
}

// TestRelativeLinksResolve: every relative link of every Markdown file names
// a file or folder that exists, and an anchor a heading of that file.
func TestRelativeLinksResolve(t *testing.T) {
	root := repoRoot(t)
	files := markdownFiles(t, root)
	if !slices.Contains(files, "README.md") || !slices.Contains(files, "docs/guide/README.md") {
		t.Fatalf("the walk missed the README or the guide: %v", files)
	}
	for _, f := range files {
		text := read(t, filepath.Join(root, f))
		for _, m := range linkRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(text, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			abs := filepath.Join(root, filepath.Dir(f), path)
			if path == "" {
				abs = filepath.Join(root, f)
			}
			st, err := os.Stat(abs)
			if err != nil {
				t.Errorf("%s: the link %q names %s, which does not exist", f, target, filepath.ToSlash(strings.TrimPrefix(abs, root+"/")))
				continue
			}
			if anchor != "" && !st.IsDir() && strings.HasSuffix(abs, ".md") && !anchors(read(t, abs))[anchor] {
				t.Errorf("%s: the link %q names the anchor #%s, which no heading of %s makes", f, target, anchor, path)
			}
		}
	}
}

// TestEveryRouteIsInTheReference: every pattern of the service's route table
// has a row in docs/reference/http-api.md, and every route a row's first cell
// names ("METHOD /path") is in the table.
func TestEveryRouteIsInTheReference(t *testing.T) {
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	routes := svc.Routes()
	if len(routes) < 20 {
		t.Fatalf("the service has only %d routes: %v", len(routes), routes)
	}
	var rows []string
	for _, l := range strings.Split(read(t, filepath.Join(repoRoot(t), "docs/reference/http-api.md")), "\n") {
		if strings.HasPrefix(l, "|") {
			rows = append(rows, l)
		}
	}
	span := regexp.MustCompile("`([^`]+)`")
	documented := func(method, path string) bool {
		word := regexp.MustCompile(`\b` + method + `\b`)
		for _, row := range rows {
			if !word.MatchString(row) {
				continue
			}
			for _, m := range span.FindAllStringSubmatch(row, -1) {
				s := m[1]
				if i := strings.Index(s, " /"); i >= 0 && !strings.HasPrefix(s, "/") {
					s = s[i+1:]
				}
				if s == path || strings.HasPrefix(s, path+"?") || strings.HasPrefix(s, path+"[") {
					return true
				}
			}
		}
		return false
	}
	for _, r := range routes {
		method, path, ok := strings.Cut(r, " ")
		if !ok {
			t.Errorf("route %q has no method", r)
			continue
		}
		if !documented(method, path) {
			t.Errorf("route %q is not in docs/reference/http-api.md", r)
		}
	}
	named := regexp.MustCompile("`((?:GET|POST|PUT|PATCH|DELETE) /[^`?\\[ ]*)")
	for _, row := range rows {
		first := strings.SplitN(strings.TrimPrefix(row, "|"), "|", 2)[0]
		for _, m := range named.FindAllStringSubmatch(first, -1) {
			if !slices.Contains(routes, m[1]) {
				t.Errorf("docs/reference/http-api.md names %q, which is not in the service's route table", m[1])
			}
		}
	}
}

// eventTypes returns the string constants named Event... of the module's
// non-test Go files whose value looks like an event type ("a.b" or "word").
func eventTypes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	shape := regexp.MustCompile(`^[a-z]+(\.[a-z_]+)*$`)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata" || n == "frontend" || n == "bench" || n == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, "Event") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					if shape.MatchString(v) && !strings.HasPrefix(n.Name, "EventOrigin") {
						rel, _ := filepath.Rel(root, p)
						out[v] = n.Name + " in " + filepath.ToSlash(rel)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryEventTypeIsInTheReference: every event type the code defines has a
// row in docs/reference/events.md, and every row names one the code defines.
func TestEveryEventTypeIsInTheReference(t *testing.T) {
	root := repoRoot(t)
	types := eventTypes(t, root)
	for _, must := range []string{api.EventDelta, api.EventToolRequest, api.EventReset} {
		if _, ok := types[must]; !ok {
			t.Fatalf("the scan missed %q; found %v", must, types)
		}
	}
	rows := map[string]bool{}
	first := regexp.MustCompile("^\\| `([a-z._]+)` \\|")
	for _, l := range strings.Split(read(t, filepath.Join(root, "docs/reference/events.md")), "\n") {
		if m := first.FindStringSubmatch(l); m != nil {
			rows[m[1]] = true
		}
	}
	for ty, where := range types {
		if !rows[ty] {
			t.Errorf("event type %q (%s) has no row in docs/reference/events.md", ty, where)
		}
	}
	for ty := range rows {
		if _, ok := types[ty]; !ok {
			t.Errorf("docs/reference/events.md has a row for %q, which no Event constant of the code defines", ty)
		}
	}
}

// configKeys returns the JSON keys of the config file, as dotted paths
// ("agents.chat.model"), from the types the service decodes it into.
func configKeys() []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || (name == "" && !f.Anonymous) {
				continue
			}
			if name == "" {
				walk(f.Type, path)
				continue
			}
			out = append(out, path+name)
			walk(f.Type, path+name+".")
		}
	}
	walk(reflect.TypeOf(config.Config{}), "")
	return out
}

// TestEveryConfigKeyIsInTheReference: every key of the config file appears in
// docs/reference/config.md as a `code span`, and every key a table's first
// cell names is one the code reads.
func TestEveryConfigKeyIsInTheReference(t *testing.T) {
	keys := configKeys()
	if !slices.Contains(keys, "agents.chat.model") || !slices.Contains(keys, "memory.embeddingModel") {
		t.Fatalf("the walk missed keys: %v", keys)
	}
	text := read(t, filepath.Join(repoRoot(t), "docs/reference/config.md"))
	leaf := map[string]bool{}
	for _, k := range keys {
		parts := strings.Split(k, ".")
		name := parts[len(parts)-1]
		leaf[name] = true
		if !strings.Contains(text, "`"+name+"`") {
			t.Errorf("config key %q is not in docs/reference/config.md", k)
		}
	}
	span := regexp.MustCompile("`([a-zA-Z]+)`")
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		first := strings.SplitN(strings.TrimPrefix(l, "|"), "|", 2)[0]
		for _, m := range span.FindAllStringSubmatch(first, -1) {
			if !leaf[m[1]] {
				t.Errorf("docs/reference/config.md lists %q, which is not a key of the config file", m[1])
			}
		}
	}
}

// flagNames returns the flags the shipped programs define (flag.String,
// fs.BoolVar, fs.Var, ...) in their non-test Go files, name → where.
func flagNames(t *testing.T, root string) map[string]string {
	t.Helper()
	re := regexp.MustCompile(`\.(?:String|Bool|Int|Int64|Duration|Float64|Uint|Var|StringVar|BoolVar|IntVar|Int64Var|DurationVar|Func)\((?:[^,()"]+, )?"([a-z][a-z0-9-]*)",`)
	out := map[string]string{}
	var files []string
	for _, pat := range []string{"*.go", "internal/cli/*.go", "cmd/*/*.go", "app/*.go", "app/backup/*.go", "app/audit/cmd/*/*.go"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.Contains(filepath.Base(f), "e2e") {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(read(t, f), -1) {
			rel, _ := filepath.Rel(root, f)
			out[m[1]] = filepath.ToSlash(rel)
		}
	}
	return out
}

// TestEveryFlagIsInTheReference: every flag of jarvis, jarvis-service and
// jarvis-audit appears in docs/reference/cli.md.
func TestEveryFlagIsInTheReference(t *testing.T) {
	root := repoRoot(t)
	flags := flagNames(t, root)
	for _, must := range []string{"service-url", "addr", "key-dir", "file"} {
		if _, ok := flags[must]; !ok {
			t.Fatalf("the scan missed the flag %q; found %v", must, flags)
		}
	}
	text := read(t, filepath.Join(root, "docs/reference/cli.md"))
	for name, where := range flags {
		if !strings.Contains(text, "`--"+name+"`") && !strings.Contains(text, "`-"+name+"`") && !strings.Contains(text, "`-"+name+"`,") {
			t.Errorf("the flag %q (%s) is not in docs/reference/cli.md", name, where)
		}
	}
}

// TestEveryCommandIsInTheReference: every subcommand of the jarvis binary's
// one table (internal/cli) has its section in docs/reference/cli.md.
func TestEveryCommandIsInTheReference(t *testing.T) {
	text := read(t, filepath.Join(repoRoot(t), "docs/reference/cli.md"))
	names := cli.Names()
	if len(names) < 8 {
		t.Fatalf("the command table lists only %v", names)
	}
	for _, n := range names {
		if !strings.Contains(text, "`jarvis "+n) {
			t.Errorf("the command %q is not in docs/reference/cli.md", n)
		}
	}
}
