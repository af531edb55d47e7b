package ranged

import "syscall"

var (
	errConnReset   error = syscall.ECONNRESET
	errConnRefused error = syscall.ECONNREFUSED
)
