// Package layoutcheck holds the tests that keep the repository's map true:
// every Go package directory and every test folder has a row in AGENTS.md's
// table, and no Go comment names a Go file that does not exist. It has no
// code of its own; `go test ./internal/layoutcheck` runs the checks.
package layoutcheck
