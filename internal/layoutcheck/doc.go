// Package layoutcheck holds the tests that keep the repository's map and
// docs true: every Go package directory and every test folder has a row in
// AGENTS.md's table, and no Go comment names a Go file that does not exist
// (layout_test.go); every relative link of the project's Markdown resolves
// (anchors included), and every route, event type, config key and
// command-line flag the code defines is in docs/reference/, and nothing
// there is missing from the code (docs_test.go; error codes:
// service/errortable_test.go). It has no code of its own; `go test
// ./internal/layoutcheck` runs the checks.
package layoutcheck
