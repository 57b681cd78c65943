# Jarvis — the two commands of the README:
#   make run    set up everything and open the desktop app
#   make test   set up everything and run every test
# Other targets: make serve (the service alone), make bench, make fuzz, make build,
# make wails-build (the same binary through the wails CLI), make package (.deb).

SHELL := /bin/bash
GO ?= go
GOTAGS := sqlite_fts5
# The desktop build tags (e2e and other builds of the window use them).
DESKTOP_TAGS := desktop,production,webkit2_41,sqlite_fts5
BIN := build/bin
FUZZTIME ?= 20s
export CGO_ENABLED := 1
# Go's own default, made explicit: wails build sets CGO_CFLAGS to "" when it
# is unset, which compiles SQLite's C code without optimization.
export CGO_CFLAGS ?= -O2 -g
# The commit the About view and --version show; the version is wails.json's.
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# The go build line `wails build` runs (tags in its order: desktop, wails.json's
# build:tags, its WebView2 strategy tag (Windows only), production; -buildvcs=false; our ldflags then -w -s; build/ as a
# C++ include dir), so that make build and make wails-build give the same binary.
WAILS_TAGS := desktop,webkit2_41,sqlite_fts5,wv2runtime.download,production
WAILS ?= $(shell command -v wails 2>/dev/null || echo $$($(GO) env GOPATH)/bin/wails)

.PHONY: run test serve setup setup-desktop frontend build wails-build same-binary package package-test build-service go-test frontend-test e2e bench fuzz vet clean

run: setup build
	./$(BIN)/jarvis

serve: setup build-service
	./$(BIN)/jarvis-service

setup:
	@bash scripts/setup.sh

frontend:
	cd frontend && npm ci --no-audit --no-fund && npm run build

build-service:
	$(GO) build -tags $(GOTAGS) -o $(BIN)/jarvis-service ./cmd/jarvis-service

build: frontend build-service
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-w -s" -o $(BIN)/jarvis-confine ./cmd/jarvis-confine
	CGO_CXXFLAGS="-I$(CURDIR)/build" $(GO) build -buildvcs=false -tags $(WAILS_TAGS) -ldflags "-X main.commit=$(COMMIT) -w -s" -o $(BIN)/jarvis .

# The same binary through the wails CLI (installed by scripts/setup.sh at the
# version go.mod pins); the bindings are not used by the frontend.
wails-build:
	$(WAILS) build -skipbindings -ldflags "-X main.commit=$(COMMIT)"

# Checks that make build and make wails-build give the same file (not part of
# make test: it builds twice, about two minutes on a cold cache).
same-binary: build
	cp $(BIN)/jarvis $(BIN)/jarvis.make-build
	$(MAKE) wails-build
	cmp $(BIN)/jarvis.make-build $(BIN)/jarvis && sha256sum $(BIN)/jarvis.make-build $(BIN)/jarvis

# A .deb of the desktop app (cmd/jarvis-package, nfpm) in build/bin/.
package: build
	$(GO) run ./cmd/jarvis-package --bin $(BIN)/jarvis --out $(BIN)

# Builds the package, checks it, installs it into a scratch root and starts it under Xvfb.
package-test: package
	bash scripts/package-test.sh $(BIN)

vet:
	$(GO) vet -tags $(GOTAGS) $$($(GO) list -e ./... | grep -v '^jarvis$$')

# Go tests run inside a private D-Bus session with an unlocked keyring, so
# go-keyring talks to a real Secret Service and never to the user's own.
go-test:
	bash scripts/with-session-bus.sh $(GO) test -race -tags $(GOTAGS) -count=1 -timeout 20m $$($(GO) list -e ./... | grep -v '^jarvis$$')

frontend-test:
	cd frontend && npm ci --no-audit --no-fund && npm test

e2e: build
	bash scripts/e2e.sh

test: setup vet go-test frontend-test e2e package-test

bench: setup
	bash scripts/bench.sh

fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf $(BIN) frontend/dist frontend/node_modules
