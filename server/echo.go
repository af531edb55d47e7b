package server

import "github.com/scand/scand/internal/echo"

// quoteName is a name from a request as a message repeats it: quoted, and
// cut at 4 KiB (echo.Quote), so that the status still reaches the client.
func quoteName(name string) string { return echo.Quote(name) }
