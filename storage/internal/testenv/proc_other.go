//go:build !linux

package testenv

import "os/exec"

// setDeathSignal does nothing here: only Linux offers a parent-death
// signal. The tests still stop their servers when they end.
func setDeathSignal(*exec.Cmd) {}
