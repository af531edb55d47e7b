package main

import (
	"context"
	"fmt"
)

// runVersion prints the version of this binary. (Ask a server for its
// version with the client package's Client.Version; the CLI does not, so
// that `scand version` never depends on a server, or on SCAND_SERVER.)
func runVersion(ctx context.Context, args []string, e env) error {
	fs := newFlagSet("version", "", e)
	pos, err := parse(fs, args, e)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErr(fs, "unexpected argument %q", pos[0])
	}
	fmt.Fprintf(e.stdout, "scand %s\n", version)
	return nil
}
