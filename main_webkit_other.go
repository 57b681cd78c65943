//go:build !(desktop && linux)

package main

func leanWebKit() bool { return false }
