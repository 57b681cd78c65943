//go:build !unix

package cliagent

func syscallKill(int) error { return nil }
