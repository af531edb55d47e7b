package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// testPool stands in for gRPC's buffer pool: it counts the buffers out,
// remembers where they are (to tell slices of them from copies), and
// poisons each buffer returned, so that a batch still pointing into one
// reads garbage and fails its comparison.
type testPool struct {
	mu  sync.Mutex
	out map[*byte]int // buffer start -> capacity
}

func newTestPool() *testPool { return &testPool{out: map[*byte]int{}} }

func (p *testPool) Get(n int) *[]byte {
	b := make([]byte, n)
	p.mu.Lock()
	p.out[unsafe.SliceData(b)] = n
	p.mu.Unlock()
	return &b
}

func (p *testPool) Put(b *[]byte) {
	for i := range *b {
		(*b)[i] = 0xA5
	}
	p.mu.Lock()
	delete(p.out, unsafe.SliceData(*b))
	p.mu.Unlock()
}

func (p *testPool) outstanding() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.out)
}

// holds reports whether b lies inside one of the pool's buffers.
func (p *testPool) holds(b []byte) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for start, n := range p.out {
		s := uintptr(unsafe.Pointer(start))
		if a >= s && a+uintptr(len(b)) <= s+uintptr(n) {
			return true
		}
	}
	return false
}

// split cuts msg into buffers of size bytes from pool, as gRPC hands over
// a message reassembled from HTTP/2 frames (buffers below gRPC's pooling
// threshold are plain slices, as gRPC makes them).
func (p *testPool) split(msg []byte, size int) mem.BufferSlice {
	var out mem.BufferSlice
	for len(msg) > 0 {
		k := min(size, len(msg))
		if mem.IsBelowBufferPoolingThreshold(k) {
			out = append(out, mem.SliceBuffer(bytes.Clone(msg[:k])))
		} else {
			b := p.Get(k)
			copy(*b, msg[:k])
			out = append(out, mem.NewBuffer(b, p))
		}
		msg = msg[k:]
	}
	return out
}

// stream cuts the messages of a stream, laid end to end, into buffers of
// size bytes from pool, and hands each message over as gRPC does when a
// frame holds the end of one message and the start of the next: the
// frame is split (mem.SplitUnsafe), both parts sharing its reference
// count.
func (p *testPool) stream(msgs [][]byte, size int) []mem.BufferSlice {
	frames := p.split(bytes.Join(msgs, nil), size)
	out := make([]mem.BufferSlice, len(msgs))
	for i, m := range msgs {
		for n := len(m); n > 0; {
			f := frames[0]
			if f.Len() <= n {
				out[i] = append(out[i], f)
				frames = frames[1:]
				n -= f.Len()
				continue
			}
			left, right := mem.SplitUnsafe(f, n)
			out[i] = append(out[i], left)
			frames[0] = right
			n = 0
		}
	}
	return out
}

// flightMessages writes recs as a Flight stream and returns its messages'
// bytes.
func flightMessages(t testing.TB, schema *arrow.Schema, recs []arrow.RecordBatch, opts ...ipc.Option) [][]byte {
	t.Helper()
	var out [][]byte
	w := flight.NewRecordWriter(sink(func(fd *flight.FlightData) error {
		b, err := proto.Marshal(fd)
		out = append(out, b)
		return err
	}), append(opts, ipc.WithSchema(schema))...)
	for i, r := range recs {
		var err error
		if i == len(recs)-1 {
			err = w.WriteWithAppMetadata(r, []byte(`{"rows":1}`))
		} else {
			err = w.Write(r)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

type sink func(*flight.FlightData) error

func (s sink) Send(fd *flight.FlightData) error { return s(fd) }

// readStream decodes msgs, cut into size-byte buffers from pool, with
// ReceiveCodec and a Reader, and returns the batches (retained) and the
// error that ended the stream. Each message's buffers are freed after
// Unmarshal, as gRPC frees them.
func readStream(pool *testPool, msgs [][]byte, size int, alloc memory.Allocator) ([]arrow.RecordBatch, error) {
	return readSplit(msgs, func(i int) mem.BufferSlice { return pool.split(msgs[i], size) }, alloc)
}

// readShared is readStream with frames shared by neighbouring messages
// (testPool.stream).
func readShared(pool *testPool, msgs [][]byte, size int, alloc memory.Allocator) ([]arrow.RecordBatch, error) {
	cut := pool.stream(msgs, size)
	recs, err := readSplit(msgs, func(i int) mem.BufferSlice { return cut[i] }, alloc)
	return recs, err
}

func readSplit(msgs [][]byte, cut func(int) mem.BufferSlice, alloc memory.Allocator) ([]arrow.RecordBatch, error) {
	i := 0
	recv := func() (*Received, error) {
		for {
			if i == len(msgs) {
				return nil, io.EOF
			}
			data := cut(i)
			i++
			m := &Received{}
			err := (ReceiveCodec{}).Unmarshal(data, m)
			data.Free()
			if err != nil {
				return nil, err
			}
			if len(m.Header) > 0 {
				return m, nil
			}
			m.Free()
		}
	}
	rdr, err := NewReader(recv, alloc)
	if err != nil {
		return nil, err
	}
	defer rdr.Release()
	var out []arrow.RecordBatch
	for rdr.Next() {
		r := rdr.RecordBatch()
		r.Retain()
		out = append(out, r)
	}
	return out, rdr.Err()
}

func releaseAll(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// testSchema has a column of every type the Reader loads itself.
func testSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "bin", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "fsb", Type: &arrow.FixedSizeBinaryType{ByteWidth: 5}, Nullable: true},
		{Name: "dec", Type: &arrow.Decimal128Type{Precision: 20, Scale: 2}, Nullable: true},
		{Name: "d32", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		{Name: "null", Type: arrow.Null, Nullable: true},
		{Name: "list", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "llist", Type: arrow.LargeListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "fsl", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int16), Nullable: true},
		{Name: "st", Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true}), Nullable: true},
		{Name: "map", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "uuid", Type: extensions.NewUUIDType(), Nullable: true},
	}, nil)
}

// randomBatch builds n rows of schema, about a fifth of nullable values
// null.
func randomBatch(schema *arrow.Schema, n int, seed uint64) arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
	defer b.Release()
	for i, f := range schema.Fields() {
		fill(b.Field(i), rng, n, f.Nullable)
	}
	return b.NewRecordBatch()
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return b
}

func fill(b array.Builder, rng *rand.Rand, n int, nullable bool) {
	for range n {
		if nullable && rng.IntN(5) == 0 {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.Int8Builder:
			b.Append(int8(rng.Int()))
		case *array.Int16Builder:
			b.Append(int16(rng.Int()))
		case *array.Uint16Builder:
			b.Append(uint16(rng.Int()))
		case *array.Int32Builder:
			b.Append(rng.Int32())
		case *array.Int64Builder:
			b.Append(rng.Int64())
		case *array.Float32Builder:
			b.Append(rng.Float32())
		case *array.Float64Builder:
			b.Append(rng.NormFloat64())
		case *array.BooleanBuilder:
			b.Append(rng.IntN(2) == 0)
		case *array.StringBuilder:
			b.Append(string(randBytes(rng, rng.IntN(40))))
		case *array.LargeStringBuilder:
			b.Append(string(randBytes(rng, rng.IntN(40))))
		case *array.BinaryBuilder:
			b.Append(randBytes(rng, rng.IntN(40)))
		case *array.FixedSizeBinaryBuilder:
			b.Append(randBytes(rng, b.Type().(*arrow.FixedSizeBinaryType).ByteWidth))
		case *array.Decimal128Builder:
			b.Append(decimal128.FromI64(rng.Int64N(1 << 50)))
		case *array.Date32Builder:
			b.Append(arrow.Date32(rng.Int32N(50000)))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(rng.Int64()))
		case *array.NullBuilder:
			b.AppendNull()
		case *array.ListBuilder:
			b.Append(true)
			fill(b.ValueBuilder(), rng, rng.IntN(4), true)
		case *array.LargeListBuilder:
			b.Append(true)
			fill(b.ValueBuilder(), rng, rng.IntN(4), true)
		case *array.FixedSizeListBuilder:
			b.Append(true)
			fill(b.ValueBuilder(), rng, int(b.Type().(*arrow.FixedSizeListType).Len()), true)
		case *array.StructBuilder:
			b.Append(true)
			for j := range b.NumField() {
				fill(b.FieldBuilder(j), rng, 1, true)
			}
		case *array.MapBuilder:
			b.Append(true)
			k := rng.IntN(3)
			fill(b.KeyBuilder(), rng, k, false)
			fill(b.ItemBuilder(), rng, k, true)
		case *extensions.UUIDBuilder:
			b.AppendBytes([16]byte(randBytes(rng, 16)))
		default:
			panic(fmt.Sprintf("fill: %T", b))
		}
	}
}

// checkSame compares got with want batch by batch and releases got.
func checkSame(t *testing.T, what string, got, want []arrow.RecordBatch) {
	t.Helper()
	defer releaseAll(got)
	if len(got) != len(want) {
		t.Fatalf("%s: %d batches, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !got[i].Schema().Equal(want[i].Schema()) {
			t.Errorf("%s: batch %d has schema %s, want %s", what, i, got[i].Schema(), want[i].Schema())
		}
		if !array.RecordEqual(got[i], want[i]) {
			t.Errorf("%s: batch %d differs", what, i)
		}
	}
}

// Every type the Reader loads comes out as written, however the messages
// are cut into buffers; the batches own their memory exactly: once they
// are released, every received buffer is back in the pool and every copy
// freed. Buffers are poisoned when freed, and the batches are compared
// after all the stream's buffers were freed by the codec's caller, so a
// batch that kept a pointer into a freed buffer fails.
func TestReaderRoundTrip(t *testing.T) {
	schema := testSchema()
	var want []arrow.RecordBatch
	for i, n := range []int{0, 1, 7, 300, 3000} {
		want = append(want, randomBatch(schema, n, uint64(i)))
	}
	defer releaseAll(want)
	msgs := flightMessages(t, schema, want)
	for _, size := range []int{13, 100, 2000, 16 << 10, 1 << 20} {
		pool := newTestPool()
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		got, err := readStream(pool, msgs, size, alloc)
		if err != nil {
			t.Fatalf("%d-byte buffers: %v", size, err)
		}
		checkSame(t, fmt.Sprintf("%d-byte buffers", size), got, want)
		alloc.AssertSize(t, 0)
		if n := pool.outstanding(); n != 0 {
			t.Errorf("%d-byte buffers: %d received buffers not freed", size, n)
		}
		got, err = readShared(pool, msgs, size, alloc)
		if err != nil {
			t.Fatalf("%d-byte shared buffers: %v", size, err)
		}
		checkSame(t, fmt.Sprintf("%d-byte shared buffers", size), got, want)
		alloc.AssertSize(t, 0)
		if n := pool.outstanding(); n != 0 {
			t.Errorf("%d-byte shared buffers: %d received buffers not freed", size, n)
		}
	}
}

// Where one received buffer holds a whole Arrow buffer, the batch slices
// it in place and keeps the buffer until the batch is released.
func TestReaderSlicesInPlace(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	want := []arrow.RecordBatch{randomBatch(schema, 1000, 1)}
	defer releaseAll(want)
	msgs := flightMessages(t, schema, want)
	pool := newTestPool()
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	got, err := readStream(pool, msgs, 1<<20, alloc)
	if err != nil {
		t.Fatal(err)
	}
	values := got[0].Column(0).Data().Buffers()[1].Bytes()
	if !unalignedOK && uintptr(unsafe.Pointer(unsafe.SliceData(values)))%8 != 0 {
		t.Skip("the body is not 8-byte aligned on an architecture that needs it")
	}
	if !pool.holds(values) {
		t.Errorf("the values were copied, not sliced from the received buffer")
	}
	if pool.outstanding() != 1 {
		t.Errorf("%d received buffers held, want the one the batch slices", pool.outstanding())
	}
	alloc.AssertSize(t, 0) // nothing copied
	checkSame(t, "in place", got, want)
	if n := pool.outstanding(); n != 0 {
		t.Errorf("%d received buffers held after the batch was released", n)
	}
}

// Without an allocator, the copies come from the recycling pool and go
// back to it when the batches are released.
func TestReaderCopyPool(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	want := []arrow.RecordBatch{randomBatch(schema, 20000, 1), randomBatch(schema, 20000, 2)}
	defer releaseAll(want)
	msgs := flightMessages(t, schema, want)
	before := theCopyPool.outstanding.Load()
	pool := newTestPool()
	got, err := readStream(pool, msgs, 16<<10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if theCopyPool.outstanding.Load() == before {
		t.Errorf("no copy came from the pool")
	}
	checkSame(t, "copy pool", got, want)
	if n := theCopyPool.outstanding.Load() - before; n != 0 {
		t.Errorf("%d bytes of copies not returned", n)
	}
	if n := pool.outstanding(); n != 0 {
		t.Errorf("%d received buffers not freed", n)
	}
}

// Streams the loader leaves to arrow-go (dictionaries, run-end encoding)
// and messages it leaves (compressed bodies) decode the same, and own
// their memory the same way.
func TestReaderViaIPC(t *testing.T) {
	dictSchema := arrow.NewSchema([]arrow.Field{
		{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}},
		{Name: "x", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
	dictBatch := func(n int) arrow.RecordBatch {
		b := array.NewRecordBuilder(memory.NewGoAllocator(), dictSchema)
		defer b.Release()
		for i := range n {
			b.Field(0).(*array.BinaryDictionaryBuilder).AppendString(fmt.Sprint("v", i%13))
			b.Field(1).(*array.Int64Builder).Append(int64(i))
		}
		return b.NewRecordBatch()
	}
	cases := []struct {
		name   string
		schema *arrow.Schema
		recs   []arrow.RecordBatch
		opts   []ipc.Option
	}{
		{"dictionary", dictSchema, []arrow.RecordBatch{dictBatch(100), dictBatch(3000)}, nil},
		{"lz4", testSchema(), []arrow.RecordBatch{randomBatch(testSchema(), 2000, 1), randomBatch(testSchema(), 10, 2)}, []ipc.Option{ipc.WithLZ4()}},
		{"zstd", testSchema(), []arrow.RecordBatch{randomBatch(testSchema(), 2000, 3)}, []ipc.Option{ipc.WithZstd()}},
	}
	for _, c := range cases {
		msgs := flightMessages(t, c.schema, c.recs, c.opts...)
		for _, size := range []int{333, 16 << 10, 1 << 22} {
			pool := newTestPool()
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			got, err := readStream(pool, msgs, size, alloc)
			if err != nil {
				t.Fatalf("%s, %d-byte buffers: %v", c.name, size, err)
			}
			checkSame(t, fmt.Sprintf("%s, %d-byte buffers", c.name, size), got, c.recs)
			alloc.AssertSize(t, 0)
			if n := pool.outstanding(); n != 0 {
				t.Errorf("%s, %d-byte buffers: %d received buffers not freed", c.name, size, n)
			}
		}
		// And without an allocator (the client's default).
		got, err := readStream(newTestPool(), msgs, 16<<10, nil)
		if err != nil {
			t.Fatalf("%s, no allocator: %v", c.name, err)
		}
		checkSame(t, c.name+", no allocator", got, c.recs)
		releaseAll(c.recs)
	}
}

// corrupt returns msgs with message i replaced by what edit makes of its
// FlightData.
func corrupt(t *testing.T, msgs [][]byte, i int, edit func(fd *flight.FlightData)) [][]byte {
	t.Helper()
	fd := &flight.FlightData{}
	if err := proto.Unmarshal(msgs[i], fd); err != nil {
		t.Fatal(err)
	}
	edit(fd)
	b, err := proto.Marshal(fd)
	if err != nil {
		t.Fatal(err)
	}
	out := append([][]byte(nil), msgs...)
	out[i] = b
	return out
}

// Malformed messages are errors, never panics, and leak nothing.
func TestReaderMalformed(t *testing.T) {
	schema := testSchema()
	want := []arrow.RecordBatch{randomBatch(schema, 500, 9)}
	defer releaseAll(want)
	msgs := flightMessages(t, schema, want)
	// The first buffer entry of the batch header: its offset and length
	// are the two int64 words after the field nodes; find them by value.
	cases := map[string][][]byte{
		"truncated body": corrupt(t, msgs, 1, func(fd *flight.FlightData) { fd.DataBody = fd.DataBody[:len(fd.DataBody)/2] }),
		"no body":        corrupt(t, msgs, 1, func(fd *flight.FlightData) { fd.DataBody = nil }),
		"header garbage": corrupt(t, msgs, 1, func(fd *flight.FlightData) { fd.DataHeader = bytes.Repeat([]byte{0xff}, 64) }),
		"short header":   corrupt(t, msgs, 1, func(fd *flight.FlightData) { fd.DataHeader = fd.DataHeader[:len(fd.DataHeader)/3] }),
		"schema garbage": corrupt(t, msgs, 0, func(fd *flight.FlightData) { fd.DataHeader = []byte{1, 2, 3} }),
		"huge lengths": corrupt(t, msgs, 1, func(fd *flight.FlightData) {
			fd.DataHeader = bytes.Clone(fd.DataHeader)
			// Every int64 that is the batch's row count (500) becomes huge.
			for i := 0; i+8 <= len(fd.DataHeader); i += 4 {
				if binary.LittleEndian.Uint64(fd.DataHeader[i:]) == 500 {
					binary.LittleEndian.PutUint64(fd.DataHeader[i:], 1<<40)
				}
			}
		}),
		"batch before schema": {msgs[1], msgs[0]},
		"two schemas":         {msgs[0], msgs[0], msgs[1]},
	}
	for name, stream := range cases {
		pool := newTestPool()
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		got, err := readStream(pool, stream, 1000, alloc)
		releaseAll(got)
		if err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
		alloc.AssertSize(t, 0)
		if n := pool.outstanding(); n != 0 {
			t.Errorf("%s: %d received buffers not freed", name, n)
		}
	}
}

// FuzzReader feeds the codec and the Reader arbitrary streams: a byte
// giving the buffer size, then messages, each a 4-byte length and that
// many bytes of FlightData, after a valid schema message (arrow-go
// decodes schemas, and trusts their flatbuffers' lengths). Nothing may
// panic, every value of every batch returned must be readable, and
// nothing may leak.
func FuzzReader(f *testing.F) {
	schema := testSchema()
	recs := []arrow.RecordBatch{randomBatch(schema, 3, 1), randomBatch(schema, 20, 2)}
	seed := func(size byte, msgs [][]byte) {
		b := []byte{size}
		for _, m := range msgs {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(m)))
			b = append(b, m...)
		}
		f.Add(b)
	}
	msgs := flightMessages(f, schema, recs)
	seed(0, msgs[1:])
	seed(7, msgs[1:])
	seed(200, flightMessages(f, schema, recs[:1], ipc.WithLZ4())[1:])
	releaseAll(recs)
	schemaMsg := msgs[0]
	defer func(n int64) { maxDecompressed = n }(maxDecompressed)
	maxDecompressed = 1 << 20
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		size := 1 + int(in[0])*37
		msgs := [][]byte{schemaMsg}
		for rest := in[1:]; len(rest) >= 4; {
			n := int(binary.LittleEndian.Uint32(rest))
			rest = rest[4:]
			if n > len(rest) {
				n = len(rest)
			}
			msgs = append(msgs, rest[:n])
			rest = rest[n:]
		}
		pool := newTestPool()
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		got, err := readStream(pool, msgs, size, alloc)
		for _, r := range got {
			if r.NumRows() > 1000 {
				continue // an absurd but valid length (a null column)
			}
			for _, c := range r.Columns() {
				_ = c.String() // reads every value
			}
		}
		releaseAll(got)
		_ = err
		alloc.AssertSize(t, 0)
		if n := pool.outstanding(); n != 0 {
			t.Errorf("%d received buffers not freed", n)
		}
	})
}

// Random damage to valid batch messages (bytes changed, words
// overwritten, messages cut short) gives errors or readable batches,
// never panics, and leaks nothing: FuzzReader's property on a fixed set
// of inputs, so that it runs in every test run.
func TestReaderMutations(t *testing.T) {
	schema := testSchema()
	recs := []arrow.RecordBatch{randomBatch(schema, 3, 1), randomBatch(schema, 20, 2)}
	defer releaseAll(recs)
	msgs := flightMessages(t, schema, recs)
	rng := rand.New(rand.NewPCG(1, 2))
	for it := range 1000 {
		m := append([]byte(nil), msgs[1+it%2]...)
		for k := 0; k < 1+rng.IntN(4); k++ {
			if len(m) == 0 {
				break
			}
			i := rng.IntN(len(m))
			switch rng.IntN(3) {
			case 0:
				m[i] = byte(rng.Int())
			case 1:
				if i+8 <= len(m) {
					binary.LittleEndian.PutUint64(m[i:], rng.Uint64()>>rng.IntN(64))
				}
			case 2:
				m = m[:i]
			}
		}
		pool := newTestPool()
		alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
		got, _ := readStream(pool, [][]byte{msgs[0], m}, 1+rng.IntN(300), alloc)
		for _, r := range got {
			if r.NumRows() <= 1000 {
				for _, c := range r.Columns() {
					_ = c.String()
				}
			}
		}
		releaseAll(got)
		alloc.AssertSize(t, 0)
		if n := pool.outstanding(); n != 0 {
			t.Fatalf("mutation %d: %d received buffers not freed", it, n)
		}
	}
}

// BenchmarkReceiveBatch decodes a stream of 4 MiB record batches (16
// int64 and float64 columns) as gRPC hands their messages over, in 16 KiB
// buffers, into batches that are then released: with the Reader (batches
// from the received buffers, straddling buffers copied into recycled
// memory) and by gathering each message into one buffer for arrow-go's
// Flight reader (ReceiveCodec into a FlightData). B/s is per message
// byte, each op including the copy into the 16 KiB buffers that stands
// for gRPC's. In this loop the garbage collector hands the gathered
// buffers' memory straight back, so the two cost about the same here and
// differ in bytes allocated (about 50 KB against 4.2 MB per batch); in a
// client, where batches live longer and the heap is larger, that fresh
// memory costs page faults and clearing (bench/goread -compare).
//
//	go test ./wire -run XXX -bench ReceiveBatch -benchmem -count 6
func BenchmarkReceiveBatch(b *testing.B) {
	var fields []arrow.Field
	for i := range 16 {
		typ := arrow.DataType(arrow.PrimitiveTypes.Int64)
		if i >= 8 {
			typ = arrow.PrimitiveTypes.Float64
		}
		fields = append(fields, arrow.Field{Name: fmt.Sprint("c", i), Type: typ})
	}
	schema := arrow.NewSchema(fields, nil)
	rec := randomBatch(schema, 32768, 1)
	defer rec.Release()
	msgs := flightMessages(b, schema, []arrow.RecordBatch{rec})
	batch := msgs[1]
	frames := func(msg []byte) mem.BufferSlice {
		var out mem.BufferSlice
		for len(msg) > 0 {
			k := min(frameSize, len(msg))
			p := ReceivePool().Get(k)
			copy(*p, msg[:k])
			out = append(out, mem.NewBuffer(p, ReceivePool()))
			msg = msg[k:]
		}
		return out
	}
	b.Run("reader", func(b *testing.B) {
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		next := 0
		recv := func() (*Received, error) {
			msg := batch
			if next == 0 {
				msg = msgs[0]
			}
			next++
			data := frames(msg)
			m := &Received{}
			err := (ReceiveCodec{}).Unmarshal(data, m)
			data.Free()
			return m, err
		}
		rdr, err := NewReader(recv, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer rdr.Release()
		for b.Loop() {
			if !rdr.Next() {
				b.Fatal(rdr.Err())
			}
		}
	})
	b.Run("gathering", func(b *testing.B) {
		b.SetBytes(int64(len(batch)))
		b.ReportAllocs()
		next := 0
		rdr, err := flight.NewRecordReader(sourceFunc(func() (*flight.FlightData, error) {
			msg := batch
			if next == 0 {
				msg = msgs[0]
			}
			next++
			data := frames(msg)
			fd := &flight.FlightData{}
			err := (ReceiveCodec{}).Unmarshal(data, fd)
			data.Free()
			return fd, err
		}))
		if err != nil {
			b.Fatal(err)
		}
		defer rdr.Release()
		for b.Loop() {
			if !rdr.Next() {
				b.Fatal(rdr.Err())
			}
		}
	})
}

type sourceFunc func() (*flight.FlightData, error)

func (f sourceFunc) Recv() (*flight.FlightData, error) { return f() }
