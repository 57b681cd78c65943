package service_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of service/, as the compiler's import graph shows them:
//   - the root (package service) composes everything: it alone imports the
//     runtimes and their engines;
//   - the edge (httpapi, listener) imports no runtime, no engine and not the
//     root, so that an HTTP change never reaches into how an agent runs;
//   - the route packages no runtime owns (sessionsapi, providersapi) keep
//     the edge's rules, and only the root imports them: they get their
//     dependencies from it as fields;
//   - a runtime or engine imports no other runtime or engine (its own
//     sub-packages, such as proxy/proxytest, and the engine it drives
//     aside) and not the root;
//   - what several runtimes share (turn, toolwait, idempotency) imports no
//     runtime either: a runtime reaches another only through the root.
//
// Runtimes are the packages named …rt (one per agent type); engines the
// protocol packages they drive.
var (
	edgePackages = []string{"jarvis/service/httpapi", "jarvis/service/listener", "jarvis/service/sessionsapi", "jarvis/service/providersapi", "jarvis/service/a2aserver"}
	// shared by runtimes (and the root): no runtime below them
	sharedPackages = []string{"jarvis/service/turn", "jarvis/service/toolwait", "jarvis/service/idempotency"}
	// every agent type's runtime: the rules must be about packages that exist
	runtimePackages = []string{"jarvis/service/chatrt", "jarvis/service/acprt", "jarvis/service/clirt",
		"jarvis/service/externalrt", "jarvis/service/proxyrt", "jarvis/service/roundtablert", "jarvis/service/a2art"}
	// routePackages: edge packages only the root imports
	routePackages = map[string]bool{"jarvis/service/sessionsapi": true, "jarvis/service/providersapi": true, "jarvis/service/a2aserver": true}
	// engine → the runtime that drives it (the root drives those without one yet)
	enginePackages = map[string]string{
		"jarvis/service/cliagent":   "jarvis/service/clirt",
		"jarvis/service/acpagent":   "jarvis/service/acprt",
		"jarvis/service/proxy":      "jarvis/service/proxyrt",
		"jarvis/service/roundtable": "jarvis/service/roundtablert",
	}
)

const rootPackage = "jarvis/service"

type listedPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func isRuntime(path string) bool {
	if !strings.HasPrefix(path, rootPackage+"/") {
		return false
	}
	for e := range enginePackages {
		if path == e || strings.HasPrefix(path, e+"/") {
			return true
		}
	}
	return strings.HasSuffix(strings.SplitN(strings.TrimPrefix(path, rootPackage+"/"), "/", 2)[0], "rt")
}

// family is the top package under service/ that path belongs to; an
// engine belongs to the runtime that drives it.
func family(path string) string {
	top := rootPackage + "/" + strings.SplitN(strings.TrimPrefix(path, rootPackage+"/"), "/", 2)[0]
	if rt, ok := enginePackages[top]; ok {
		return rt
	}
	return top
}

func TestServiceLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-tags", "sqlite_fts5", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		seen[p.ImportPath] = true
	}
	must := append(append(append([]string{rootPackage}, edgePackages...), sharedPackages...), runtimePackages...)
	for e := range enginePackages {
		must = append(must, e)
	}
	for _, must := range must {
		if !seen[must] { // the rules below must be about packages that exist
			t.Fatalf("go list did not list %s", must)
		}
	}
	isEdge := func(path string) bool { return slices.Contains(edgePackages, path) }
	isShared := func(path string) bool { return slices.Contains(sharedPackages, path) }
	for _, p := range pkgs {
		if p.ImportPath == rootPackage {
			continue
		}
		for _, imp := range p.Imports {
			if isRuntime(imp) && family(imp) != family(p.ImportPath) {
				t.Errorf("%s imports the runtime %s: only the root (package service) may", p.ImportPath, imp)
			}
			if routePackages[imp] && family(imp) != family(p.ImportPath) {
				t.Errorf("%s imports %s: only the root (package service) may", p.ImportPath, imp)
			}
		}
		for _, dep := range p.Deps {
			switch {
			case dep == rootPackage:
				t.Errorf("%s depends on the root package service: the root composes, nothing under it imports it", p.ImportPath)
			case isEdge(p.ImportPath) && isRuntime(dep):
				t.Errorf("%s (the HTTP edge) depends on the runtime %s", p.ImportPath, dep)
			case isShared(p.ImportPath) && isRuntime(dep):
				t.Errorf("%s (shared by the runtimes) depends on the runtime %s", p.ImportPath, dep)
			case isRuntime(p.ImportPath) && isRuntime(dep) && family(dep) != family(p.ImportPath):
				t.Errorf("the runtime %s depends on another runtime, %s", p.ImportPath, dep)
			}
		}
	}
}
