// Package wire is the layout of scand's Flight messages on the wire, shared
// by the server, which writes them, and the Go client, which reads them.
//
// It holds the stream-stats JSON of a stream's last message (MarshalStats,
// UnmarshalStats; the message is scandv1.StreamStats).
package wire
