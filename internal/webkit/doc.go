// Package webkit holds the desktop window's memory settings for WebKitGTK
// that Wails does not expose (lean_linux.go, built with the desktop tag on
// Linux): the UI process without OpenGL, JavaScriptCore without its JIT,
// the document-viewer cache model and two malloc arenas. main calls Lean
// first, before any thread reads the environment.
package webkit
