// Package docscheck holds the tests that keep the documentation true to the
// code: every relative link of the project's Markdown resolves (anchors
// included), and every route, event type, config key and command-line flag
// the code defines is in docs/reference/ (error codes:
// service/errortable_test.go). It has no code of its own.
package docscheck
