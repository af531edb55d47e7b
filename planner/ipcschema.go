package planner

import (
	"bytes"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// SerializeSchema is s as Flight carries a schema (an IPC stream of the
// schema message and no batch), byte for byte what arrow-go's
// flight.SerializeSchema writes: tickets hold their schemas so, and the
// planner does not import Flight.
func SerializeSchema(s *arrow.Schema, mem memory.Allocator) []byte {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(s), ipc.WithAllocator(mem))
	w.Close()
	return buf.Bytes()
}

// deserializeSchema reads what SerializeSchema writes (arrow-go's
// flight.DeserializeSchema); DecodeSchema checks untrusted bytes first.
func deserializeSchema(b []byte, mem memory.Allocator) (*arrow.Schema, error) {
	r, err := ipc.NewReader(bytes.NewReader(b), ipc.WithAllocator(mem))
	if err != nil {
		return nil, err
	}
	defer r.Release()
	return r.Schema(), nil
}
