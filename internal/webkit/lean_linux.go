//go:build desktop && linux

package webkit

// Memory settings for WebKitGTK that Wails does not expose. The window loads
// one local page with the hardware-acceleration policy "never" (main.go), so
// the UI process never composites with OpenGL; what remains is what it costs
// to have OpenGL loaded at all. Measured with the e2e self-test (PSS of the
// app and its WebKit processes, build/e2e/bench.md; docs/BENCHMARKS.md):
//
//   - The UI process without EGL: WebKitGTK 2.50 opens an EGL display in the
//     UI process while it creates the web view, only to offer the DMA-BUF
//     renderer, which the "never" policy does not use; on Mesa that loads the
//     whole driver and libLLVM (about 8 MB of relocated data per process plus
//     the driver's heap and text). libglvnd reads its vendor list once per
//     process, at the first EGL call, so the app makes that first call with
//     __EGL_VENDOR_LIBRARY_FILENAMES pointing at no vendor and restores the
//     environment at once: the UI process keeps no EGL vendor, and the web
//     process, started later with the restored environment, gets its EGL
//     display (it aborts without one) as before. GTK's own GLX probe at
//     display open (GDK_GL=disable) and the DMA-BUF renderer
//     (WEBKIT_DISABLE_DMABUF_RENDERER=1) are switched off with it: web content
//     then reaches the window through shared memory, the path WebKitGTK uses
//     whenever the GPU path is unavailable. Together about 20 MB less.
//   - The document-viewer cache model: no memory cache of pages and resources
//     beyond the one open page (a browser-sized cache is only memory here).
//   - JavaScriptCore without its JIT compilers (JSC_useJIT=0), in all three
//     processes: the window runs one page of our own code, and shows text
//     from models and external agents in the process that can ask for the OS
//     tools; without a JIT, the class of engine bugs most exploits go through
//     (as in Apple's Lockdown Mode) is gone, and so are the compilers'
//     thunks, code and data: about 4 MB less. Our JavaScript runs in the
//     interpreter, 2 to 4 times slower, which the hot paths are written for
//     (appending a delta stays well under a frame; docs/BENCHMARKS.md).
//     JARVIS_WEBKIT_JIT=1 keeps the JIT.
//   - Two C malloc arenas per process (the main thread's and one shared by
//     the others) instead of up to eight per core: the app's SQLite calls
//     come from whichever thread runs the goroutine, and each arena keeps
//     its own free pages. About 0.4 MB less; WebKit's own allocations do not
//     go through malloc.
//
// Every variable the user has set wins, and JARVIS_WEBKIT_LEAN=0 turns all of
// it off (JARVIS_WEBKIT_CACHE=browser only the cache model). The variables
// are set in the C environment only: WebKit and its processes read them, the
// Go environment that run_command passes to the user's commands does not
// carry them.

/*
#cgo webkit2_41 pkg-config: webkit2gtk-4.1 egl
#cgo !webkit2_41 pkg-config: webkit2gtk-4.0 egl
#include <stdlib.h>
#include <malloc.h>
#include <string.h>
#include <webkit2/webkit2.h>
#include <EGL/egl.h>

static gboolean jarvis_webkit_lean_idle(gpointer data) {
	webkit_web_context_set_cache_model(webkit_web_context_get_default(), WEBKIT_CACHE_MODEL_DOCUMENT_VIEWER);
	return G_SOURCE_REMOVE;
}

// GTK and WebKit belong to the main loop's thread: run there, once it runs.
static void jarvis_webkit_cache_lean(void) {
	g_idle_add(jarvis_webkit_lean_idle, NULL);
}

static void jarvis_setenv_default(const char *name, const char *value) {
	const char *v = getenv(name);
	if (v == NULL || *v == '\0') setenv(name, value, 1);
}

static int jarvis_webkit_at_least(unsigned major, unsigned minor) {
	unsigned ma = webkit_get_major_version(), mi = webkit_get_minor_version();
	return ma > major || (ma == major && mi >= minor);
}

static int jarvis_set(const char *name) {
	const char *v = getenv(name);
	return v != NULL && *v != '\0';
}

// JavaScriptCore reads its options from the environment of each process.
static void jarvis_webkit_without_jit(void) {
	jarvis_setenv_default("JSC_useJIT", "0");
}

// This process's allocator is running already: mallopt; the WebKit
// processes read the variable when they start.
static void jarvis_few_malloc_arenas(void) {
	if (jarvis_set("MALLOC_ARENA_MAX") || jarvis_set("GLIBC_TUNABLES")) return;
	mallopt(M_ARENA_MAX, 2);
	setenv("MALLOC_ARENA_MAX", "2", 1);
}

// Returns 1 when the UI process was left without an EGL vendor.
static int jarvis_ui_without_gl(void) {
	// The user chose a GL setup for WebKit: leave it alone.
	const char *dmabuf = getenv("WEBKIT_DISABLE_DMABUF_RENDERER");
	if (jarvis_set("__EGL_VENDOR_LIBRARY_FILENAMES") || jarvis_set("__EGL_VENDOR_LIBRARY_DIRS") ||
	    jarvis_set("WEBKIT_FORCE_DMABUF_RENDERER") || jarvis_set("WEBKIT_FORCE_COMPOSITING_MODE") ||
	    (dmabuf != NULL && strcmp(dmabuf, "0") == 0))
		return 0;
	// Measured on WebKitGTK 2.50: older versions keep their defaults.
	if (!jarvis_webkit_at_least(2, 50))
		return 0;
	jarvis_setenv_default("GDK_GL", "disable");
	jarvis_setenv_default("WEBKIT_DISABLE_DMABUF_RENDERER", "1");
	// libglvnd loads its vendor list at the first EGL call of the process
	// and keeps it: make that call now, with no vendor, then restore.
	setenv("__EGL_VENDOR_LIBRARY_FILENAMES", "/nonexistent/jarvis-no-egl-vendor.json", 1);
	eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	unsetenv("__EGL_VENDOR_LIBRARY_FILENAMES");
	return 1;
}
*/
import "C"

import "os"

// Lean applies the memory settings. It runs at the start of run,
// before the service, GTK or WebKit start any thread that reads the
// environment, and reports whether the UI process was kept free of OpenGL.
func Lean() (noGL bool) {
	if os.Getenv("JARVIS_WEBKIT_LEAN") == "0" {
		return false
	}
	noGL = C.jarvis_ui_without_gl() == 1
	if os.Getenv("JARVIS_WEBKIT_JIT") != "1" {
		C.jarvis_webkit_without_jit()
	}
	C.jarvis_few_malloc_arenas()
	if os.Getenv("JARVIS_WEBKIT_CACHE") != "browser" {
		C.jarvis_webkit_cache_lean()
	}
	return noGL
}
