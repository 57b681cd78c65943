//go:build !unix

package tools

import "io/fs"

// linkCount is the number of hard links of a file; 1 where os does not
// report it (Windows), so hard links are not compared there.
func linkCount(fs.FileInfo) uint64 { return 1 }
