//go:build !linux

package procstop

// Without /proc the tools a CLI started outside its process group are not
// found; the group signal reaches the rest.
type procID struct{}

func addDescendants(int, map[int]procID) {}

func signalTree(map[int]procID, int, Stage) {}
