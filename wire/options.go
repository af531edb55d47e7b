package wire

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// SendPath is how the server turns record batches into FlightData
// messages. The zero value is the default, SendZeroCopy.
type SendPath uint8

const (
	// SendZeroCopy writes body buffers by reference (see docs/send-path.md).
	SendZeroCopy SendPath = iota
	// SendStock is arrow-go's Flight record writer, for comparison.
	SendStock
)

var sendPathNames = [...]string{SendZeroCopy: "zerocopy", SendStock: "stock"}

func (p SendPath) String() string {
	if int(p) < len(sendPathNames) {
		return sendPathNames[p]
	}
	return fmt.Sprintf("SendPath(%d)", uint8(p))
}

// ParseSendPath reads a send path's name; "" is the default.
func ParseSendPath(s string) (SendPath, error) {
	switch s {
	case "", "zerocopy":
		return SendZeroCopy, nil
	case "stock":
		return SendStock, nil
	}
	return 0, fmt.Errorf("unknown send path %q; want zerocopy or stock", s)
}

// Compression is the IPC body compression of a stream. The zero value is
// none.
type Compression uint8

const (
	CompressNone Compression = iota
	CompressLZ4              // LZ4_FRAME
	CompressZstd
)

var compressionNames = [...]string{CompressNone: "", CompressLZ4: "lz4", CompressZstd: "zstd"}

// String is the name requests and tickets use: "", "lz4" or "zstd".
func (c Compression) String() string {
	if int(c) < len(compressionNames) {
		return compressionNames[c]
	}
	return fmt.Sprintf("Compression(%d)", uint8(c))
}

// ParseCompression reads a compression name as requests spell it.
func ParseCompression(s string) (Compression, error) {
	switch s {
	case "":
		return CompressNone, nil
	case "lz4":
		return CompressLZ4, nil
	case "zstd":
		return CompressZstd, nil
	}
	return 0, fmt.Errorf("unknown IPC compression %q; want \"\" (none), \"lz4\" or \"zstd\"", s)
}

// IPCOptions are the ipc writer options that apply c.
func (c Compression) IPCOptions() []ipc.Option {
	switch c {
	case CompressLZ4:
		return []ipc.Option{ipc.WithLZ4()}
	case CompressZstd:
		return []ipc.Option{ipc.WithZstd()}
	}
	return nil
}
