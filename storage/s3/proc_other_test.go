//go:build !linux

package s3_test

import "os/exec"

// setDeathSignal does nothing here: only Linux offers a parent-death
// signal. TestMain still stops the servers when the tests end.
func setDeathSignal(*exec.Cmd) {}
