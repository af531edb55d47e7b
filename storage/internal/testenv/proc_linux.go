package testenv

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill a test server when the test binary
// dies, so a crashed or killed test run leaves no server behind.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
