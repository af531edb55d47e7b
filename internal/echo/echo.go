// Package echo cuts what error messages repeat back to a client. Names,
// paths, claims and action types come from requests and may be of any
// length; a status message carrying one whole can outgrow what a client
// accepts in HTTP/2 trailers (8 KiB in gRPC C++, and so in pyarrow), and
// the client then sees RESOURCE_EXHAUSTED or INTERNAL from its transport
// instead of the server's answer.
package echo

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxName is how much of one name a message repeats: 4 KiB.
const MaxName = 4 << 10

// Quote returns name quoted as %q does, cut to its first MaxName bytes
// (on a UTF-8 boundary) with the number of bytes left out.
func Quote(name string) string {
	if len(name) <= MaxName {
		return strconv.Quote(name)
	}
	return strconv.Quote(strings.ToValidUTF8(name[:MaxName], "")) + fmt.Sprintf("... (%d more bytes)", len(name)-MaxName)
}

// Cut returns msg cut to its first max bytes (on a UTF-8 boundary), with
// the number of bytes left out.
func Cut(msg string, max int) string {
	if len(msg) <= max {
		return msg
	}
	return strings.ToValidUTF8(msg[:max], "") + fmt.Sprintf("... (%d more bytes)", len(msg)-max)
}
