//go:build !blankpage

package main

import "embed"

// assets is the window's page: the built frontend.
//
//go:embed all:frontend/dist
var assets embed.FS
