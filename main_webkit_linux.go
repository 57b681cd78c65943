//go:build desktop && linux

package main

// WebKitGTK settings Wails does not expose, applied to the default web
// context on the GTK main loop as soon as it runs: the document-viewer cache
// model keeps no memory cache of pages and resources beyond the one open
// page (this window loads one local page, so a browser-sized cache is only
// memory). Measured effect: see build/e2e/bench.md.

/*
#cgo webkit2_41 pkg-config: webkit2gtk-4.1
#cgo !webkit2_41 pkg-config: webkit2gtk-4.0
#include <webkit2/webkit2.h>

static gboolean jarvis_webkit_lean_idle(gpointer data) {
	webkit_web_context_set_cache_model(webkit_web_context_get_default(), WEBKIT_CACHE_MODEL_DOCUMENT_VIEWER);
	return G_SOURCE_REMOVE;
}

// GTK and WebKit belong to the main loop's thread: run there, once it runs.
static void jarvis_webkit_lean(void) {
	g_idle_add(jarvis_webkit_lean_idle, NULL);
}
*/
import "C"

import "os"

// leanWebKit applies the memory settings unless JARVIS_WEBKIT_CACHE=browser.
func leanWebKit() {
	if os.Getenv("JARVIS_WEBKIT_CACHE") == "browser" {
		return
	}
	C.jarvis_webkit_lean()
}
