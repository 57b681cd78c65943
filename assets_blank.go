//go:build blankpage

package main

import "embed"

// assets is an empty page instead of the UI: the same binary, service and
// WebKit window with nothing of the frontend in it. scripts/e2e.sh measures
// its idle memory as the floor the UI's own cost is read against
// (docs/BENCHMARKS.md). Not for use.
//
//go:embed bench/blankpage
var assets embed.FS
