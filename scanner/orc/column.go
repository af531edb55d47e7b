package orc

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// Limits on one array of one batch. Run-length encoding and compression
// let a small file describe a huge column (a 2-byte RLE run of list
// lengths of 2^31 each), so sizes computed from stream values are checked
// before anything is allocated for them. Both are far above what a batch
// of DefaultBatchRows rows of real data needs; a legitimate file that
// exceeds them can be read with a smaller ReadOptions.BatchRows.
const (
	// maxBatchBytes caps the string or binary bytes of one array (Arrow's
	// offsets are int32 in any case).
	maxBatchBytes = 1 << 30
	// maxBatchElements caps the values of one array: rows of a batch, or
	// elements of the lists and maps in it.
	maxBatchElements = 1 << 25
)

const nsPerSecond int64 = 1e9

// colReader decodes one projected column of one stripe into Arrow arrays.
type colReader interface {
	// next decodes n rows. present, if not nil, marks the rows that exist
	// in this column's streams (the parent struct or union is not null
	// there); the other rows are null and consume nothing.
	next(n int, present []bool) (arrow.ArrayData, error)
}

// stripeStreams gives column readers the streams of one stripe.
type stripeStreams struct {
	mem       memory.Allocator
	codec     *codec
	raw       map[streamKey][]byte
	encodings []columnEncoding
	decimal64 bool // file version 1.9999: DECIMAL64 for precision <= 18
	tz        *time.Location
	streams   []*stream // every stream handed out, for release
	scratch   *scratch  // decoder buffers reused from stripe to stripe
	acct      *account  // charged for dictionaries
	// seeks say where, in some streams, decoding starts (seek.go); seekErr
	// is the first failure to get there. Both nil without seeking.
	seeks   map[streamKey]seekAt
	seekErr error
}

// scratch keeps decoder buffers from one stripe to the next within a Read:
// each stripe builds the same readers in the same order, and reader i gets
// slot i of each kind back, already grown to the size it needed.
type scratch struct {
	ints   []*[]int64
	bools  []*[]bool
	bytes  []*[]byte
	rle    []*rleV2
	nInts  int
	nBools int
	nBytes int
	nRLE   int
}

// reset makes every slot available to the next stripe's readers.
func (s *scratch) reset() { s.nInts, s.nBools, s.nBytes, s.nRLE = 0, 0, 0, 0 }

func slot[T any](slots *[]*T, n *int) *T {
	if *n == len(*slots) {
		*slots = append(*slots, new(T))
	}
	p := (*slots)[*n]
	*n++
	return p
}

func (s *scratch) int64s() *[]int64 {
	if s == nil {
		return new([]int64)
	}
	return slot(&s.ints, &s.nInts)
}

func (s *scratch) boolSlice() *[]bool {
	if s == nil {
		return new([]bool)
	}
	return slot(&s.bools, &s.nBools)
}

func (s *scratch) byteSlice() *[]byte {
	if s == nil {
		return new([]byte)
	}
	return slot(&s.bytes, &s.nBytes)
}

// intDecoder returns an integer decoder of one stream; RLE v2 decoders
// (4 KiB of run buffer each) are reused.
func (ss *stripeStreams) intDecoder(col int, kind streamKind, v2, signed bool) intDecoder {
	st := ss.stream(col, kind)
	if !v2 || ss.scratch == nil {
		d := newIntDecoder(st, v2, signed)
		ss.skipValues(col, kind, func(n int) error { return discardInts(d, n) })
		return d
	}
	d := slot(&ss.scratch.rle, &ss.scratch.nRLE)
	patch := d.patch
	*d = rleV2{s: st, signed: signed, patch: patch}
	ss.skipValues(col, kind, func(n int) error { return discardInts(d, n) })
	return d
}

// release returns the streams' decompression buffers to the codec, for
// the next stripe. The stripe's readers must not be used afterwards.
func (ss *stripeStreams) release() {
	for _, s := range ss.streams {
		s.release()
	}
	ss.streams = nil
}

type streamKey struct {
	column uint32
	kind   streamKind
}

func (ss *stripeStreams) stream(col int, kind streamKind) *stream {
	raw := ss.raw[streamKey{uint32(col), kind}]
	c := ss.codec
	if c != nil && c.kind == compNone {
		c = nil
	}
	s := newStream(c, raw)
	ss.streams = append(ss.streams, s)
	ss.skipBytes(s, streamKey{uint32(col), kind})
	return s
}

func (ss *stripeStreams) has(col int, kind streamKind) bool {
	_, ok := ss.raw[streamKey{uint32(col), kind}]
	return ok
}

// newColReader builds the reader of a projected node for one stripe.
func newColReader(n *projNode, ss *stripeStreams) (colReader, error) {
	if n.id >= len(ss.encodings) {
		return nil, fmt.Errorf("column %d has no encoding in the stripe footer", n.id)
	}
	enc := ss.encodings[n.id].kind
	nl := nulls{valid: ss.scratch.boolSlice()}
	sc := ss.scratch
	if ss.has(n.id, streamPresent) {
		nl.pres = ss.boolRLE(n.id, streamPresent)
	}
	checkEnc := func(allowed ...encodingKind) error {
		for _, a := range allowed {
			if enc == a {
				return nil
			}
		}
		return fmt.Errorf("column %d (%v) has encoding %v", n.id, n.t.kind, enc)
	}
	mem := ss.mem
	switch n.t.kind {
	case kindBoolean:
		if err := checkEnc(encDirect); err != nil {
			return nil, err
		}
		return &boolColumn{nulls: nl, mem: mem, tmp: sc.boolSlice(), data: ss.boolRLE(n.id, streamData)}, nil
	case kindByte:
		if err := checkEnc(encDirect); err != nil {
			return nil, err
		}
		return &byteColumn{nulls: nl, mem: mem, data: ss.byteRLE(n.id, streamData)}, nil
	case kindShort, kindInt, kindLong, kindDate:
		if err := checkEnc(encDirect, encDirectV2); err != nil {
			return nil, err
		}
		width := map[typeKind]int{kindShort: 2, kindInt: 4, kindLong: 8, kindDate: 4}[n.t.kind]
		return &intColumn{nulls: nl, mem: mem, dt: n.dt, width: width,
			data: ss.intDecoder(n.id, streamData, enc.isV2(), true)}, nil
	case kindFloat, kindDouble:
		if err := checkEnc(encDirect); err != nil {
			return nil, err
		}
		width := 4
		if n.t.kind == kindDouble {
			width = 8
		}
		return &floatColumn{nulls: nl, mem: mem, dt: n.dt, width: width, data: ss.stream(n.id, streamData)}, nil
	case kindString, kindVarchar, kindChar, kindBinary:
		if enc.isDictionary() && n.t.kind != kindBinary {
			return &dictColumn{nulls: nl, mem: mem, dt: n.dt, tmp: sc.int64s(), offs: sc.int64s(), dict: sc.byteSlice(),
				index:   ss.intDecoder(n.id, streamData, enc.isV2(), false),
				lengths: ss.intDecoder(n.id, streamLength, enc.isV2(), false),
				blob:    ss.stream(n.id, streamDictionaryData),
				size:    int(ss.encodings[n.id].dictionarySize),
				hasBlob: ss.has(n.id, streamDictionaryData), hasLen: ss.has(n.id, streamLength), acct: ss.acct}, nil
		}
		if err := checkEnc(encDirect, encDirectV2); err != nil {
			return nil, err
		}
		return &binaryColumn{nulls: nl, mem: mem, dt: n.dt, tmp: sc.int64s(), data: ss.stream(n.id, streamData),
			lengths: ss.intDecoder(n.id, streamLength, enc.isV2(), false)}, nil
	case kindTimestamp, kindTimestampInstant:
		if err := checkEnc(encDirect, encDirectV2); err != nil {
			return nil, err
		}
		c := &timestampColumn{nulls: nl, mem: mem, dt: n.dt, tmp: sc.int64s(),
			secs:  ss.intDecoder(n.id, streamData, enc.isV2(), true),
			nanos: ss.intDecoder(n.id, streamSecondary, enc.isV2(), false)}
		loc := time.UTC
		if n.t.kind == kindTimestamp && ss.tz != nil {
			loc = ss.tz
		}
		c.zone = newZoneCache(loc)
		c.epoch = time.Date(2015, 1, 1, 0, 0, 0, 0, loc).Unix()
		return c, nil
	case kindDecimal:
		if err := checkEnc(encDirect, encDirectV2); err != nil {
			return nil, err
		}
		_, s := decimalParams(n.t)
		c := &decimalColumn{nulls: nl, mem: mem, dt: n.dt, scale: s, tmp: sc.int64s()}
		if ss.decimal64 && n.t.precision > 0 && n.t.precision <= 18 {
			c.dec64 = ss.intDecoder(n.id, streamData, true, true)
		} else {
			c.data = ss.stream(n.id, streamData)
			c.scales = ss.intDecoder(n.id, streamSecondary, enc.isV2(), true)
		}
		return c, nil
	case kindStruct:
		if err := checkEnc(encDirect); err != nil {
			return nil, err
		}
		c := &structColumn{nulls: nl, mem: mem, dt: n.dt, present: sc.boolSlice()}
		for _, ch := range n.children {
			r, err := newColReader(ch, ss)
			if err != nil {
				return nil, err
			}
			c.children = append(c.children, r)
		}
		return c, nil
	case kindList, kindMap:
		if err := checkEnc(encDirect, encDirectV2); err != nil {
			return nil, err
		}
		c := &listColumn{nulls: nl, mem: mem, dt: n.dt, isMap: n.t.kind == kindMap, tmp: sc.int64s(),
			lengths: ss.intDecoder(n.id, streamLength, enc.isV2(), false)}
		for _, ch := range n.children {
			r, err := newColReader(ch, ss)
			if err != nil {
				return nil, err
			}
			c.children = append(c.children, r)
		}
		return c, nil
	case kindUnion:
		if err := checkEnc(encDirect); err != nil {
			return nil, err
		}
		c := &unionColumn{nulls: nl, mem: mem, dt: n.dt, tags: newByteRLE(ss.stream(n.id, streamData))}
		for _, ch := range n.children {
			r, err := newColReader(ch, ss)
			if err != nil {
				return nil, err
			}
			c.children = append(c.children, r)
		}
		return c, nil
	}
	return nil, fmt.Errorf("column %d has type %v: %w", n.id, n.t.kind, scanner.ErrUnsupported)
}

// nulls reads a column's PRESENT stream.
type nulls struct {
	pres  *boolRLE // nil: no PRESENT stream, every existing row is valid
	valid *[]bool
}

// read returns which of n rows are valid (nil when all are) and how many.
func (nl *nulls) read(n int, parent []bool) ([]bool, int, error) {
	if nl.pres == nil && parent == nil {
		return nil, n, nil
	}
	valid := grow(nl.valid, n)
	switch {
	case nl.pres == nil:
		copy(valid, parent)
	case parent == nil:
		if err := nl.pres.next(valid); err != nil {
			return nil, 0, fmt.Errorf("PRESENT stream: %w", err)
		}
	default:
		k := countTrue(parent)
		if err := nl.pres.next(valid[:k]); err != nil {
			return nil, 0, fmt.Errorf("PRESENT stream: %w", err)
		}
		j := k - 1
		for i := n - 1; i >= 0; i-- {
			if parent[i] {
				valid[i] = valid[j]
				j--
			} else {
				valid[i] = false
			}
		}
	}
	k := countTrue(valid)
	if k == n {
		return nil, n, nil
	}
	return valid, k, nil
}

func countTrue(b []bool) int {
	bs := boolBytes(b)
	k, i := 0, 0
	for ; i+8 <= len(bs); i += 8 {
		k += bits.OnesCount64(binary.LittleEndian.Uint64(bs[i:]))
	}
	for _, v := range bs[i:] {
		k += int(v)
	}
	return k
}

// grow returns (*s)[:n], reallocating when it is too short.
func grow[T any](s *[]T, n int) []T {
	if cap(*s) < n {
		*s = make([]T, n, n+n/4)
	}
	return (*s)[:n]
}

// newBuffer allocates an Arrow buffer of nbytes from mem.
func newBuffer(mem memory.Allocator, nbytes int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(nbytes)
	return b
}

// view reinterprets an Arrow buffer's bytes (64-byte aligned) as []T.
func view[T any](b []byte) []T {
	var z T
	sz := int(unsafe.Sizeof(z))
	if len(b) < sz {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/sz)
}

// bitmap builds a validity bitmap (nil when valid is nil: no nulls).
func bitmap(mem memory.Allocator, valid []bool) *memory.Buffer {
	if valid == nil {
		return nil
	}
	buf := newBuffer(mem, int(bitutil.BytesForBits(int64(len(valid)))))
	out := buf.Bytes()
	vb := boolBytes(valid)
	i := 0
	// Eight booleans (bytes of 0 or 1) at a time: the multiplication
	// gathers byte j's low bit into bit j of the top byte.
	for ; i+8 <= len(vb); i += 8 {
		out[i>>3] = byte(binary.LittleEndian.Uint64(vb[i:]) * 0x0102040810204080 >> 56)
	}
	if i < len(vb) {
		last := byte(0)
		for j, v := range vb[i:] {
			last |= v << uint(j)
		}
		out[i>>3] = last
	}
	return buf
}

// finish wraps buffers into ArrayData and drops this function's references.
func finish(dt arrow.DataType, n int, validCount int, bufs []*memory.Buffer, children []arrow.ArrayData) arrow.ArrayData {
	d := array.NewData(dt, n, bufs, children, n-validCount, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	for _, c := range children {
		c.Release()
	}
	return d
}

func releaseAll(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// spread moves the first k values of vals to the valid positions of
// vals[:len(valid)], zeroing the null ones. Working backwards makes it
// safe in place.
func spread[T any](vals []T, valid []bool, k int) {
	var zero T
	j := k - 1
	for i := len(valid) - 1; i >= 0; i-- {
		if valid[i] {
			vals[i] = vals[j]
			j--
		} else {
			vals[i] = zero
		}
	}
}

// fixedInt is the value types spreadInts moves: integers, and floats
// viewed as their bits.
type fixedInt interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// spreadInts is spread without a branch per row: a null row's value is
// masked to zero and the source index moves by the validity byte, so
// randomly placed nulls cost no mispredictions.
func spreadInts[T fixedInt](vals []T, valid []bool, k int) {
	vb := boolBytes(valid)
	j := k - 1
	i := len(vb) - 1
	// j <= i throughout (j+1 counts the valid rows in vb[:i+1]); once j
	// is negative the rows left are null.
	for ; i >= 0 && j >= 0; i-- {
		b := vb[i] & 1
		vals[i] = vals[j] & -T(b)
		j -= int(b)
	}
	clear(vals[:i+1])
}

type boolColumn struct {
	nulls
	mem  memory.Allocator
	data *boolRLE
	tmp  *[]bool
}

func (c *boolColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	vals := grow(c.tmp, n)
	if err := c.data.next(vals[:k]); err != nil {
		return nil, fmt.Errorf("DATA stream: %w", err)
	}
	if valid != nil {
		spreadInts(boolBytes(vals), valid, k)
	}
	data := bitmap(c.mem, vals)
	if data == nil {
		data = newBuffer(c.mem, 0)
	}
	return finish(arrow.FixedWidthTypes.Boolean, n, k, []*memory.Buffer{bitmap(c.mem, valid), data}, nil), nil
}

type byteColumn struct {
	nulls
	mem  memory.Allocator
	data *byteRLE
}

func (c *byteColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	buf := newBuffer(c.mem, n)
	vals := buf.Bytes()
	if err := c.data.next(vals[:k]); err != nil {
		buf.Release()
		return nil, fmt.Errorf("DATA stream: %w", err)
	}
	if valid != nil {
		spreadInts(vals, valid, k)
	}
	return finish(arrow.PrimitiveTypes.Int8, n, k, []*memory.Buffer{bitmap(c.mem, valid), buf}, nil), nil
}

type intColumn struct {
	nulls
	mem   memory.Allocator
	dt    arrow.DataType
	width int
	data  intDecoder
}

func (c *intColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	buf := newValueBuffer(c.mem, n*c.width)
	// Values go to the front of the buffer, then move to their rows.
	switch c.width {
	case 8:
		err = c.data.next(view[int64](buf.Bytes())[:k])
	case 4:
		err = readNarrow(c.data, view[int32](buf.Bytes())[:k])
	case 2:
		err = readNarrow(c.data, view[int16](buf.Bytes())[:k])
	}
	if err != nil {
		buf.Release()
		return nil, fmt.Errorf("DATA stream: %w", err)
	}
	if valid != nil {
		switch c.width {
		case 8:
			spreadInts(view[int64](buf.Bytes()), valid, k)
		case 4:
			spreadInts(view[int32](buf.Bytes()), valid, k)
		case 2:
			spreadInts(view[int16](buf.Bytes()), valid, k)
		}
	}
	return finish(c.dt, n, k, []*memory.Buffer{bitmap(c.mem, valid), buf}, nil), nil
}

// narrowDecoder is an intDecoder that decodes into narrower integers
// without an int64 intermediate (RLE v2).
type narrowDecoder interface {
	next32(dst []int32) error
	next16(dst []int16) error
}

// readNarrow decodes len(dst) integers, truncating each as a C cast does:
// straight into dst when the decoder can, else through a run-sized buffer
// that stays in L1 cache.
func readNarrow[T int32 | int16](d intDecoder, dst []T) error {
	if nd, ok := d.(narrowDecoder); ok {
		switch dst := any(dst).(type) {
		case []int32:
			return nd.next32(dst)
		case []int16:
			return nd.next16(dst)
		}
	}
	var tmp [512]int64
	for len(dst) > 0 {
		m := min(len(dst), len(tmp))
		if err := d.next(tmp[:m]); err != nil {
			return err
		}
		for i, v := range tmp[:m] {
			dst[i] = T(v)
		}
		dst = dst[m:]
	}
	return nil
}

type floatColumn struct {
	nulls
	mem   memory.Allocator
	dt    arrow.DataType
	width int
	data  *stream
}

func (c *floatColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	buf := newValueBuffer(c.mem, n*c.width)
	// IEEE 754 little-endian, as Arrow stores them on the little-endian
	// machines scand runs on.
	if err := c.data.readFull(buf.Bytes()[:k*c.width]); err != nil {
		buf.Release()
		return nil, fmt.Errorf("DATA stream: %w", err)
	}
	if valid != nil {
		if c.width == 4 {
			spreadInts(view[uint32](buf.Bytes()), valid, k)
		} else {
			spreadInts(view[uint64](buf.Bytes()), valid, k)
		}
	}
	return finish(c.dt, n, k, []*memory.Buffer{bitmap(c.mem, valid), buf}, nil), nil
}

// copyBytes reads exactly total bytes from s into a new buffer. The first
// reservation is the smallest of total, what the stream can still produce
// (stream.maxRemaining) and 8 times its compressed bytes plus 1 MiB, so
// that ordinary data needs one allocation while a lying length costs only
// a small multiple of the bytes really present; the buffer grows as bytes
// arrive beyond that.
func copyBytes(mem memory.Allocator, s *stream, total int) (*memory.Buffer, error) {
	buf := memory.NewResizableBuffer(mem)
	buf.Reserve(min(total, s.maxRemaining(), len(s.buf)-s.pos+8*len(s.raw)+1<<20))
	got := 0
	for got < total {
		if got >= buf.Cap() {
			buf.Reserve(min(total, 2*buf.Cap()+1))
		}
		end := min(total, buf.Cap())
		buf.ResizeNoShrink(end)
		if err := s.readFull(buf.Bytes()[got:end]); err != nil {
			buf.Release()
			return nil, err
		}
		got = end
	}
	buf.ResizeNoShrink(total)
	return buf, nil
}

// readOffsets reads the LENGTH stream of the k present values among n rows
// into lens and returns Arrow's n+1 int32 offsets (a null row repeats the
// previous offset) and the total, refusing more than limit in one batch
// (what says what is counted, for the message).
func readOffsets(mem memory.Allocator, lengths intDecoder, lens []int64, valid []bool, n int, limit int64, what string) (*memory.Buffer, int64, error) {
	if err := lengths.next(lens); err != nil {
		return nil, 0, fmt.Errorf("LENGTH stream: %w", err)
	}
	offBuf := newBuffer(mem, (n+1)*4)
	offs := view[int32](offBuf.Bytes())
	total := int64(0)
	j := 0
	offs[0] = 0
	for i := 0; i < n; i++ {
		if valid == nil || valid[i] {
			l := lens[j]
			j++
			if l < 0 || l > maxBatchBytes {
				offBuf.Release()
				return nil, 0, fmt.Errorf("LENGTH stream: invalid length %d", l)
			}
			total += l
			if total > limit {
				offBuf.Release()
				return nil, 0, fmt.Errorf("more than %d %s in one batch (read with fewer rows per batch): %w", limit, what, scanner.ErrUnsupported)
			}
		}
		offs[i+1] = int32(total)
	}
	return offBuf, total, nil
}

type binaryColumn struct {
	nulls
	mem     memory.Allocator
	dt      arrow.DataType
	data    *stream
	lengths intDecoder
	tmp     *[]int64
}

func (c *binaryColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	offBuf, total, err := readOffsets(c.mem, c.lengths, grow(c.tmp, k), valid, n, maxBatchBytes, "bytes of values")
	if err != nil {
		return nil, err
	}
	data, err := copyBytes(c.mem, c.data, int(total))
	if err != nil {
		offBuf.Release()
		return nil, fmt.Errorf("DATA stream: %w", err)
	}
	return finish(c.dt, n, k, []*memory.Buffer{bitmap(c.mem, valid), offBuf, data}, nil), nil
}

type dictColumn struct {
	nulls
	mem             memory.Allocator
	dt              arrow.DataType
	index, lengths  intDecoder
	blob            *stream
	size            int
	hasBlob, hasLen bool
	acct            *account

	loaded bool
	// Entry i is dict[offs[i]:offs[i+1]]; dict has dictPad readable bytes
	// past its last entry.
	offs *[]int64
	dict *[]byte
	tmp  *[]int64
}

// dictPad is the slack after a dictionary's bytes and after a batch's
// string data, so that entries of up to dictPad bytes are copied as one
// fixed-size move instead of a call to memmove.
const dictPad = 16

func (c *dictColumn) load() error {
	c.loaded = true
	if c.size > maxBatchElements {
		return fmt.Errorf("dictionary of %d entries exceeds %d: %w", c.size, maxBatchElements, scanner.ErrUnsupported)
	}
	if c.size > 0 && !c.hasLen {
		return fmt.Errorf("dictionary of %d entries without a LENGTH stream", c.size)
	}
	// Read the lengths in runs, so a hostile dictionarySize costs only
	// the values really present.
	offs := append((*c.offs)[:0], 0)
	var run [512]int64
	total := int64(0)
	for left := c.size; left > 0; {
		m := min(left, len(run))
		if err := c.lengths.next(run[:m]); err != nil {
			*c.offs = offs
			return fmt.Errorf("dictionary LENGTH stream: %w", err)
		}
		for _, l := range run[:m] {
			if l < 0 {
				*c.offs = offs
				return fmt.Errorf("negative dictionary entry length %d", l)
			}
			total += l
			if total > maxBatchBytes {
				*c.offs = offs
				return fmt.Errorf("dictionary larger than %d bytes: %w", maxBatchBytes, scanner.ErrUnsupported)
			}
			offs = append(offs, total)
		}
		left -= m
	}
	*c.offs = offs
	if total > 0 && !c.hasBlob {
		return fmt.Errorf("dictionary of %d bytes without a DICTIONARY_DATA stream", total)
	}
	if c.hasBlob {
		if most := int64(c.blob.maxRemaining()); total > most {
			return fmt.Errorf("dictionary entries of %d bytes in a DICTIONARY_DATA stream of at most %d", total, most)
		}
	}
	dict := (*c.dict)[:0]
	if need := total + dictPad; need > int64(cap(dict)) {
		// The slot's old buffer goes; the new one is charged and sized
		// exactly.
		if err := c.acct.reserve(need-int64(cap(dict)), "dictionary"); err != nil {
			return err
		}
		dict = make([]byte, 0, need)
	}
	for int64(len(dict)) < total {
		b, err := c.blob.next(int(total) - len(dict))
		if err != nil {
			*c.dict = dict
			return fmt.Errorf("DICTIONARY_DATA stream: %w", err)
		}
		dict = append(dict, b...)
	}
	var pad [dictPad]byte
	*c.dict = append(dict, pad[:]...)
	return nil
}

func (c *dictColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	if !c.loaded {
		if err := c.load(); err != nil {
			return nil, err
		}
	}
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	idx := grow(c.tmp, k)
	if err := c.index.next(idx); err != nil {
		return nil, fmt.Errorf("DATA stream: %w", err)
	}
	dOffs, dict := *c.offs, *c.dict
	nd := uint64(len(dOffs) - 1)
	offBuf := newBuffer(c.mem, (n+1)*4)
	offs := view[int32](offBuf.Bytes())
	fail := func(err error) (arrow.ArrayData, error) {
		offBuf.Release()
		return nil, err
	}
	tooBig := fmt.Errorf("more than %d bytes of values in one batch (read with fewer rows per batch): %w", maxBatchBytes, scanner.ErrUnsupported)
	// First the offsets (checking every index), then the bytes.
	total := int64(0)
	offs[0] = 0
	if valid == nil {
		for i, x := range idx {
			if uint64(x) >= nd {
				return fail(fmt.Errorf("dictionary index %d out of range (%d entries)", x, nd))
			}
			total += dOffs[x+1] - dOffs[x]
			if total > maxBatchBytes {
				return fail(tooBig)
			}
			offs[i+1] = int32(total)
		}
	} else {
		j := 0
		for i, ok := range valid {
			if ok {
				x := idx[j]
				j++
				if uint64(x) >= nd {
					return fail(fmt.Errorf("dictionary index %d out of range (%d entries)", x, nd))
				}
				total += dOffs[x+1] - dOffs[x]
				if total > maxBatchBytes {
					return fail(tooBig)
				}
			}
			offs[i+1] = int32(total)
		}
	}
	data := memory.NewResizableBuffer(c.mem)
	data.Reserve(int(total) + dictPad)
	data.ResizeNoShrink(int(total))
	out := data.Buf()[:int(total)+dictPad]
	pos := int64(0)
	for _, x := range idx {
		start, end := dOffs[x], dOffs[x+1]
		if l := end - start; l <= dictPad {
			// Both sides have dictPad bytes of room: move 16 bytes, keep l.
			*(*[dictPad]byte)(out[pos:]) = *(*[dictPad]byte)(dict[start:])
			pos += l
		} else {
			pos += int64(copy(out[pos:], dict[start:end]))
		}
	}
	// The padding written past the data is beyond the buffer's length.
	return finish(c.dt, n, k, []*memory.Buffer{bitmap(c.mem, valid), offBuf, data}, nil), nil
}

// zoneCache answers UTC offsets of a location, remembering the span of the
// last zone period it looked up.
type zoneCache struct {
	loc        *time.Location
	start, end int64
	offset     int64
	ok         bool
}

func newZoneCache(loc *time.Location) *zoneCache { return &zoneCache{loc: loc} }

func (z *zoneCache) offsetAt(t int64) int64 {
	if z.loc == time.UTC {
		return 0
	}
	if z.ok && t >= z.start && t < z.end {
		return z.offset
	}
	tm := time.Unix(t, 0).In(z.loc)
	_, off := tm.Zone()
	start, end := tm.ZoneBounds()
	z.offset, z.ok = int64(off), true
	z.start, z.end = math.MinInt64, math.MaxInt64
	if !start.IsZero() {
		z.start = start.Unix()
	}
	if !end.IsZero() {
		z.end = end.Unix()
	}
	return z.offset
}

type timestampColumn struct {
	nulls
	mem         memory.Allocator
	dt          arrow.DataType
	secs, nanos intDecoder
	zone        *zoneCache
	epoch       int64 // 2015-01-01 00:00:00 in the writer's time zone, as Unix seconds
	tmp         *[]int64
}

func (c *timestampColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	buf := newBuffer(c.mem, n*8)
	out := view[int64](buf.Bytes())
	if err := c.secs.next(out[:k]); err != nil {
		buf.Release()
		return nil, fmt.Errorf("DATA stream: %w", err)
	}
	nanos := grow(c.tmp, k)
	if err := c.nanos.next(nanos); err != nil {
		buf.Release()
		return nil, fmt.Errorf("SECONDARY stream: %w", err)
	}
	for i := range out[:k] {
		// The SECONDARY stream is unsigned, but readers take its values as
		// signed 64-bit (an arithmetic shift below), as ORC C++ does and
		// Java does through its cast to int: Arrow's ORC writer (pyarrow)
		// truncates towards zero when it splits a timestamp before 1970
		// into seconds and nanoseconds, so it stores negative nanoseconds
		// (-1 ns is 0 s and -1 ns), and reads them back that way.
		ns := nanos[i]
		zeros := ns & 7
		ns >>= 3
		if zeros != 0 {
			for z := int64(0); z <= zeros; z++ {
				ns *= 10
			}
		}
		if ns > 999999999 || ns < -999999999 {
			buf.Release()
			return nil, fmt.Errorf("SECONDARY stream: %d nanoseconds", ns)
		}
		// Seconds count from 2015-01-01 00:00:00 in the writer's zone; the
		// result is the writer's wall-clock time (a naive timestamp), as
		// ORC C++ and pyarrow read it with the reader zone set to UTC.
		t := out[i] + c.epoch
		t += c.zone.offsetAt(t)
		// Writers before ORC-763 truncated negative seconds towards zero.
		if t < 0 && ns > 999999 {
			t--
		}
		if t > math.MaxInt64/nsPerSecond-1 || t < math.MinInt64/nsPerSecond+1 {
			buf.Release()
			return nil, fmt.Errorf("timestamp %d s out of the range of timestamp[ns]: %w", t, scanner.ErrUnsupported)
		}
		out[i] = t*nsPerSecond + int64(ns)
	}
	if valid != nil {
		spreadInts(out, valid, k)
	}
	return finish(c.dt, n, k, []*memory.Buffer{bitmap(c.mem, valid), buf}, nil), nil
}

type decimalColumn struct {
	nulls
	mem    memory.Allocator
	dt     arrow.DataType
	scale  int32
	dec64  intDecoder // DECIMAL64 (version 1.9999)
	data   *stream    // varint128 values
	scales intDecoder // per-value scale
	tmp    *[]int64
}

var pow10 = func() [39]decimal128.Num {
	var p [39]decimal128.Num
	p[0] = decimal128.FromI64(1)
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1].Mul(decimal128.FromI64(10))
	}
	return p
}()

// readVarint128 reads a zigzag base-128 varint of up to 128 bits.
func readVarint128(s *stream) (decimal128.Num, error) {
	var lo, hi uint64
	for shift := uint(0); ; shift += 7 {
		b, err := s.readByte()
		if err != nil {
			return decimal128.Num{}, err
		}
		if shift >= 128 || (shift == 126 && b&0x7f > 3) {
			return decimal128.Num{}, fmt.Errorf("decimal varint longer than 128 bits")
		}
		v := uint64(b & 0x7f)
		if shift < 64 {
			lo |= v << shift
			if shift > 57 {
				hi |= v >> (64 - shift)
			}
		} else {
			hi |= v << (shift - 64)
		}
		if b < 0x80 {
			break
		}
	}
	// Zigzag over 128 bits: value = (u >> 1) ^ -(u & 1).
	neg := lo&1 == 1
	lo = lo>>1 | hi<<63
	hi >>= 1
	if neg {
		lo, hi = ^lo, ^hi
	}
	return decimal128.New(int64(hi), lo), nil
}

func (c *decimalColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	buf := newBuffer(c.mem, n*16)
	out := view[decimal128.Num](buf.Bytes())
	if c.dec64 != nil {
		vals := grow(c.tmp, k)
		if err := c.dec64.next(vals); err != nil {
			buf.Release()
			return nil, fmt.Errorf("DATA stream: %w", err)
		}
		for i, v := range vals {
			out[i] = decimal128.FromI64(v)
		}
	} else {
		scales := grow(c.tmp, k)
		if err := c.scales.next(scales); err != nil {
			buf.Release()
			return nil, fmt.Errorf("SECONDARY stream: %w", err)
		}
		for i := range out[:k] {
			v, err := readVarint128(c.data)
			if err != nil {
				buf.Release()
				return nil, fmt.Errorf("DATA stream: %w", err)
			}
			// Rescale to the column's scale. Hive 0.11 files give each
			// value its own scale; others repeat the column's.
			s := scales[i]
			switch {
			case s < 0 || s > 38:
				buf.Release()
				return nil, fmt.Errorf("SECONDARY stream: decimal scale %d", s)
			case int32(s) < c.scale:
				v = v.Mul(pow10[c.scale-int32(s)])
			case int32(s) > c.scale:
				v, _ = v.Div(pow10[int32(s)-c.scale])
			}
			out[i] = v
		}
	}
	if valid != nil {
		spread(out, valid, k)
	}
	return finish(c.dt, n, k, []*memory.Buffer{bitmap(c.mem, valid), buf}, nil), nil
}

type structColumn struct {
	nulls
	mem      memory.Allocator
	dt       arrow.DataType
	children []colReader
	present  *[]bool
}

func (c *structColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	// The children hold values only for rows where the struct is present.
	var childPresent []bool
	if valid != nil {
		childPresent = grow(c.present, len(valid))
		copy(childPresent, valid)
	}
	kids := make([]arrow.ArrayData, 0, len(c.children))
	for _, ch := range c.children {
		d, err := ch.next(n, childPresent)
		if err != nil {
			for _, x := range kids {
				x.Release()
			}
			return nil, err
		}
		kids = append(kids, d)
	}
	return finish(c.dt, n, k, []*memory.Buffer{bitmap(c.mem, valid)}, kids), nil
}

// listColumn decodes lists and maps: a LENGTH stream and children holding
// the concatenated elements (for maps, keys and values).
type listColumn struct {
	nulls
	mem      memory.Allocator
	dt       arrow.DataType
	isMap    bool
	lengths  intDecoder
	children []colReader
	tmp      *[]int64
}

func (c *listColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	offBuf, total, err := readOffsets(c.mem, c.lengths, grow(c.tmp, k), valid, n, maxBatchElements, "list or map elements")
	if err != nil {
		return nil, err
	}
	kids := make([]arrow.ArrayData, 0, len(c.children))
	for _, ch := range c.children {
		d, err := ch.next(int(total), nil)
		if err != nil {
			for _, x := range kids {
				x.Release()
			}
			offBuf.Release()
			return nil, err
		}
		kids = append(kids, d)
	}
	if c.isMap {
		mt := c.dt.(*arrow.MapType)
		entries := array.NewData(mt.Elem(), int(total), []*memory.Buffer{nil}, kids, 0, 0)
		for _, x := range kids {
			x.Release()
		}
		kids = []arrow.ArrayData{entries}
	}
	return finish(c.dt, n, k, []*memory.Buffer{bitmap(c.mem, valid), offBuf}, kids), nil
}

// unionColumn decodes a union as an Arrow sparse union: every variant
// array has all n rows, null where another variant (or a null union) is.
type unionColumn struct {
	nulls
	mem      memory.Allocator
	dt       arrow.DataType
	tags     *byteRLE
	children []colReader
	masks    [][]bool
}

func (c *unionColumn) next(n int, parent []bool) (arrow.ArrayData, error) {
	valid, k, err := c.read(n, parent)
	if err != nil {
		return nil, err
	}
	tagBuf := newBuffer(c.mem, n)
	tags := tagBuf.Bytes()
	if err := c.tags.next(tags[:k]); err != nil {
		tagBuf.Release()
		return nil, fmt.Errorf("DATA stream: %w", err)
	}
	if valid != nil {
		spreadInts(tags, valid, k)
	}
	if len(c.masks) < len(c.children) {
		c.masks = make([][]bool, len(c.children))
	}
	for v := range c.children {
		grow(&c.masks[v], n)
	}
	for i, t := range tags {
		if int(t) >= len(c.children) {
			tagBuf.Release()
			return nil, fmt.Errorf("union tag %d but only %d variants", t, len(c.children))
		}
		ok := valid == nil || valid[i]
		for v := range c.children {
			c.masks[v][i] = ok && int(t) == v
		}
	}
	kids := make([]arrow.ArrayData, 0, len(c.children))
	for v, ch := range c.children {
		d, err := ch.next(n, c.masks[v][:n])
		if err != nil {
			for _, x := range kids {
				x.Release()
			}
			tagBuf.Release()
			return nil, err
		}
		kids = append(kids, d)
	}
	// Arrow unions have no validity bitmap: a null union row is variant 0
	// holding a null, as Arrow's union builders append nulls.
	return finish(c.dt, n, n, []*memory.Buffer{nil, tagBuf}, kids), nil
}
