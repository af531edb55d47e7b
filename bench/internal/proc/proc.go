// Package proc starts the helper processes of the benchmark programs
// (server children, pyarrow peers), which they drive over stdin and stdout.
package proc

import (
	"io"
	"os"
	"os/exec"
	"syscall"
)

// Start starts cmd with pipes to its stdin and from its stdout, its stderr
// on ours, and the kernel set to kill it if the benchmark dies first.
func Start(cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser, err error) {
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if stdin, err = cmd.StdinPipe(); err != nil {
		return nil, nil, err
	}
	if stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, err
	}
	if err = cmd.Start(); err != nil {
		return nil, nil, err
	}
	return stdin, stdout, nil
}
