# Jarvis — the two commands of the README:
#   make run    set up everything and open the desktop app
#   make test   set up everything and run every test
# Other targets: make serve (the service alone), make bench, make fuzz, make build.

SHELL := /bin/bash
GO ?= go
GOTAGS := sqlite_fts5
DESKTOP_TAGS := desktop,production,webkit2_41,sqlite_fts5
BIN := build/bin
FUZZTIME ?= 20s
export CGO_ENABLED := 1

.PHONY: run test serve setup setup-desktop frontend build build-service go-test frontend-test e2e bench fuzz vet clean

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
	$(GO) build -tags $(DESKTOP_TAGS) -ldflags "-s -w" -o $(BIN)/jarvis .

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

test: setup vet go-test frontend-test e2e

bench: setup
	bash scripts/bench.sh

fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf $(BIN) frontend/dist frontend/node_modules
