package orc

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/scand/scand/scanner"
)

// Seeking inside a stripe with the row index positions, as ORC's
// SargApplier and seekToRowGroup do (docs/indexes.md, "Seeking").
//
// Each row index entry lists, for every stream of its column in a fixed
// order, where the stride starts in that stream:
//
//	compressed stream:   [chunk offset, offset in the decompressed chunk, RLE state...]
//	uncompressed stream: [byte offset, RLE state...]
//	RLE state: integer RLE v2 and byte RLE: values to skip from the run
//	           that starts there; boolean RLE: bytes to skip (byte RLE)
//	           and then bits.
//
// Stream order, as the ORC Java and C++ writers record them: PRESENT
// first (only when the stripe has one for the column; writers drop its
// positions otherwise), then DATA, then LENGTH or SECONDARY (timestamps'
// nanoseconds, decimals' scales). DICTIONARY_V2
// strings record only their DATA (index) stream; the dictionary is read
// whole.
//
// A run of kept strides [s0, s1) reads, in each positioned stream, from
// stride s0's chunk (or byte) offset up to stride s1's plus a slop: the
// run that starts at s1's position may hold the last values of s1-1
// (RLE runs cross strides), and its chunk must be whole. The slop is the
// worst RLE v2 run (512 values of 64 bits, a patch list as big) rounded
// up to whole compression chunks plus one, as Java's planIndexReading
// does.
//
// What this does not know (nested types, DECIMAL64, RLE v1... any column
// whose layout is not listed in seekLayout),
// positions of the wrong count, offsets outside their stream or beyond
// the block size, or a failure while getting to a run's start: the stripe
// is read as without seeking (readStripe), from the first row not yet
// emitted. Never an error by itself.

// seekAt is where a run starts in one stream: bytes to skip in its first
// decompressed chunk, then values to skip through its decoder.
type seekAt struct{ bytes, values int }

// seekFailed marks a failure to seek or to decode from a seek position:
// the caller falls back to reading the stripe whole.
type seekFailed struct{ err error }

func (e *seekFailed) Error() string { return e.err.Error() }
func (e *seekFailed) Unwrap() error { return e.err }

// posStream is one stream of a column's positions: rle RLE state values
// follow the stream offsets.
type posStream struct {
	kind streamKind
	rle  int
	bits bool // boolean RLE: the state is bytes then bits
}

// maxRunSlop bounds the bytes of one RLE run that starts at a stride's
// position: RLE v2 patched base, 512 values and as many patches of 64
// bits, plus headers.
const maxRunSlop = 2*8*512 + 64

// seekLayout is the order of column n's positioned streams, and the
// streams it reads whole; ok false when n cannot seek. dec64: the file
// stores short decimals as DECIMAL64 (version 1.9999), not sought.
func seekLayout(n *projNode, enc encodingKind, hasPresent, dec64 bool) (pos []posStream, whole []streamKind, ok bool) {
	if len(n.children) > 0 || (n.t.kind == kindDecimal && dec64 && n.t.precision > 0 && n.t.precision <= 18) {
		return nil, nil, false
	}
	if hasPresent {
		pos = append(pos, posStream{kind: streamPresent, rle: 2, bits: true})
	}
	switch k := n.t.kind; {
	case k == kindBoolean && enc == encDirect:
		pos = append(pos, posStream{kind: streamData, rle: 2, bits: true})
	case k == kindByte && enc == encDirect:
		pos = append(pos, posStream{kind: streamData, rle: 1})
	case (k == kindShort || k == kindInt || k == kindLong || k == kindDate) && enc == encDirectV2:
		pos = append(pos, posStream{kind: streamData, rle: 1})
	case (k == kindFloat || k == kindDouble) && enc == encDirect:
		pos = append(pos, posStream{kind: streamData})
	case (k == kindTimestamp || k == kindTimestampInstant) && enc == encDirectV2:
		pos = append(pos, posStream{kind: streamData, rle: 1}, posStream{kind: streamSecondary, rle: 1})
	case k == kindDecimal && enc == encDirectV2: // varints, then the scales
		pos = append(pos, posStream{kind: streamData}, posStream{kind: streamSecondary, rle: 1})
	case isStringKind(k) && enc == encDirectV2:
		pos = append(pos, posStream{kind: streamData}, posStream{kind: streamLength, rle: 1})
	case isStringKind(k) && k != kindBinary && enc == encDictionaryV2:
		pos = append(pos, posStream{kind: streamData, rle: 1})
		whole = []streamKind{streamLength, streamDictionaryData}
	default:
		return nil, nil, false
	}
	return pos, whole, true
}

func isStringKind(k typeKind) bool {
	return k == kindString || k == kindVarchar || k == kindChar || k == kindBinary
}

// ids are the ORC column ids of the projection's top-level columns.
func (p *projection) ids() []int {
	out := make([]int, len(p.nodes))
	for i, n := range p.nodes {
		out[i] = n.id
	}
	return out
}

// streamSpan is one data stream's place in the file.
type streamSpan struct{ off, len int64 }

// seekRead is one byte range to fetch for a run: stream key's bytes from
// r.Off, positioned by at.
type seekRead struct {
	key streamKey
	r   scanner.Range
	at  seekAt
}

// seekPlan is what to fetch for each run of kept strides.
type seekPlan struct {
	runs  [][]seekRead // per keep range
	whole []seekRead   // streams every run reads from their start
	bytes int64        // total to fetch
}

// planSeek plans the fetch of keep's strides of stripe g, or returns nil
// when some projected column cannot seek, or seeking would read no less
// than the stripe's projected streams.
func (f *File) planSeek(g int, ix *stripeIndex, impl *projection, keep []rowRange) *seekPlan {
	if ix == nil || ix.stride <= 0 || f.noSeek {
		return nil
	}
	sf := f.footers[g].Load()
	spans := map[streamKey]streamSpan{}
	full := int64(0)
	pos := int64(f.ft.stripes[g].offset)
	for _, st := range sf.streams {
		if impl.columns[st.column] && isDataKind(st.kind) {
			spans[streamKey{st.column, st.kind}] = streamSpan{pos, int64(st.length)}
			full += int64(st.length)
		}
		pos += int64(st.length)
	}
	plan := &seekPlan{runs: make([][]seekRead, len(keep))}
	for _, n := range impl.nodes {
		if !f.planColumn(plan, n, sf, spans, ix, keep) {
			return nil
		}
	}
	if plan.bytes >= full {
		return nil
	}
	return plan
}

// planColumn adds column n's reads to plan; false: n cannot seek.
func (f *File) planColumn(plan *seekPlan, n *projNode, sf *stripeFooter, spans map[streamKey]streamSpan, ix *stripeIndex, keep []rowRange) bool {
	if n.id >= len(sf.columns) {
		return false
	}
	_, hasPresent := spans[streamKey{uint32(n.id), streamPresent}]
	layout, whole, ok := seekLayout(n, sf.columns[n.id].kind, hasPresent, f.decimal64)
	if !ok || !coversStreams(spans, n.id, layout, whole) {
		return false
	}
	for _, k := range whole {
		key := streamKey{uint32(n.id), k}
		if sp, ok := spans[key]; ok {
			plan.whole = append(plan.whole, seekRead{key: key, r: scanner.Range{Off: sp.off, Len: sp.len}})
			plan.bytes += sp.len
		}
	}
	positions := ix.positions[n.id]
	if !positionsFit(positions, ix.strides, layout, f.codec != compNone) {
		return false
	}
	at := 0
	for _, ps := range layout {
		key := streamKey{uint32(n.id), ps.kind}
		sp, ok := spans[key]
		if !ok || !f.streamPositionsSane(positions, at, ps, sp.len) {
			return false
		}
		for i, r := range keep {
			rd, ok := f.seekRange(key, sp, positions, at, ps, ix.stride, ix.strides, r)
			if !ok {
				return false
			}
			plan.runs[i] = append(plan.runs[i], rd)
			plan.bytes += rd.r.Len
		}
		at += f.streamPosLen() + ps.rle
	}
	return true
}

// coversStreams tells whether layout and whole name every data stream
// the stripe has for column id (a reader finds no other stream).
func coversStreams(spans map[streamKey]streamSpan, id int, layout []posStream, whole []streamKind) bool {
	named := map[streamKind]bool{}
	for _, ps := range layout {
		named[ps.kind] = true
	}
	for _, k := range whole {
		named[k] = true
	}
	for key := range spans {
		if int(key.column) == id && !named[key.kind] {
			return false
		}
	}
	return true
}

// streamPosLen is how many positions locate a byte in a stream.
func (f *File) streamPosLen() int {
	if f.codec == compNone {
		return 1
	}
	return 2
}

// positionsFit tells whether every stride has exactly the positions
// layout needs.
func positionsFit(positions [][]uint64, strides int, layout []posStream, compressed bool) bool {
	want := 0
	for _, ps := range layout {
		want += 1 + ps.rle
		if compressed {
			want++
		}
	}
	if len(positions) != strides {
		return false
	}
	for _, p := range positions {
		if len(p) != want {
			return false
		}
	}
	return true
}

// streamPositionsSane checks one stream's positions (from index at of
// each entry) against what any writer produces: the first stride starts
// at the stream's start with no RLE state, chunk offsets never go back
// and stay inside the stream, and offsets inside a chunk stay inside the
// block size. Positions that pass and still lie (a shifted float offset
// cannot be told) give wrong values or a decoding failure, as in the ORC
// Java and C++ readers; a decoding failure falls back to the whole stripe.
func (f *File) streamPositionsSane(positions [][]uint64, at int, ps posStream, streamLen int64) bool {
	width := f.streamPosLen() + ps.rle
	for _, v := range positions[0][at : at+width] {
		if v != 0 {
			return false
		}
	}
	prev := uint64(0)
	for _, p := range positions {
		off := p[at]
		if off < prev || off > uint64(streamLen) {
			return false
		}
		if f.codec != compNone && p[at+1] > uint64(f.blockSize) {
			return false
		}
		prev = off
	}
	return true
}

// seekRange is the byte range, and the start position, of rows r in one
// stream whose positions begin at index at of each entry.
func (f *File) seekRange(key streamKey, sp streamSpan, positions [][]uint64, at int, ps posStream, stride int64, strides int, r rowRange) (seekRead, bool) {
	s0, s1 := int(r.start/stride), int((r.end+stride-1)/stride)
	p := positions[s0][at:]
	start, skip, ok := f.startOf(p, ps)
	if !ok || start > uint64(sp.len) {
		return seekRead{}, false
	}
	end := uint64(sp.len)
	if s1 < strides {
		next := positions[s1][at]
		if next < start {
			return seekRead{}, false
		}
		end = min(end, f.runEnd(positions, at, s1, ps))
	}
	if end < start {
		return seekRead{}, false
	}
	return seekRead{key: key, r: scanner.Range{Off: sp.off + int64(start), Len: int64(end - start)}, at: skip}, true
}

// startOf reads one stream's position: the offset to fetch from, and
// where decoding starts after it.
func (f *File) startOf(p []uint64, ps posStream) (uint64, seekAt, bool) {
	var at seekAt
	if f.codec != compNone {
		if p[1] > uint64(f.blockSize) {
			return 0, at, false
		}
		at.bytes = int(p[1])
	}
	rle := p[f.streamPosLen():]
	switch {
	case ps.bits:
		if rle[0] > 1024 || rle[1] > 8 {
			return 0, at, false
		}
		at.values = 8*int(rle[0]) + int(rle[1])
	case ps.rle == 1:
		if rle[0] > 512 {
			return 0, at, false
		}
		at.values = int(rle[0])
	}
	return p[0], at, true
}

// runEnd is where, in one stream, the bytes of the strides before s1
// end for sure. The last of them may sit in the RLE run that starts at
// s1's position (runs cross strides), which decoders read whole: up to
// maxRunSlop decompressed bytes past it; a stream without RLE (floats,
// string bytes) ends exactly at s1's position.
//
// Compressed, the run lies in s1's chunk and maybe the next ones. Chunks
// are stored back to back and decompress to the block size but for the
// stream's last, so the k-th distinct chunk offset above s1's (from the
// positions of later strides) is at or after the end of the k chunks
// from s1's. Without enough later strides, Java's bound: whole chunks of
// the block size plus headers. (If a writer flushed short chunks, a run
// comes up short, decoding fails, and the stripe is read whole.)
func (f *File) runEnd(positions [][]uint64, at, s1 int, ps posStream) uint64 {
	extra := uint64(0)
	if ps.rle > 0 {
		extra = maxRunSlop
	}
	next := positions[s1][at]
	if f.codec == compNone {
		return next + extra
	}
	block := uint64(f.blockSize)
	need := (positions[s1][at+1] + extra + block - 1) / block // chunks from s1's
	if need == 0 {
		return next
	}
	worst := next + (need+1)*(3+block)
	last := next
	for s := s1 + 1; s < len(positions); s++ {
		if off := positions[s][at]; off > last {
			last = off
			if need--; need == 0 {
				return min(off, worst)
			}
		}
	}
	return worst
}

// readStripeSeeking reads the kept strides keep of stripe g by seeking.
// It returns the rows still to read the ordinary way (nil: none): all of
// keep when the stripe cannot seek, those from the first row not emitted
// when seeking failed on the way.
func (f *File) readStripeSeeking(ctx context.Context, g int, ix *stripeIndex, impl *projection, sc *arrow.Schema, mem memory.Allocator,
	c *codec, scr *scratch, acct *account, batchRows int64, keep []rowRange, emit func(arrow.RecordBatch) error) ([]rowRange, error) {
	plan := f.planSeek(g, ix, impl, keep)
	if plan == nil {
		return keep, nil
	}
	what := fmt.Sprintf("%s: stripe %d", f.name, g)
	bufs, err := f.fetchSeek(ctx, what, plan, acct)
	if err != nil {
		return nil, err
	}
	sf := f.footers[g].Load()
	for i, r := range keep {
		run := stripeRun{raw: map[streamKey][]byte{}, seeks: map[streamKey]seekAt{}, from: r.start, to: r.end}
		for j, rd := range plan.whole {
			run.raw[rd.key] = bufs.whole[j]
		}
		for j, rd := range plan.runs[i] {
			run.raw[rd.key], run.seeks[rd.key] = bufs.runs[i][j], rd.at
		}
		var emitErr error
		emitted := r.start // decodeRun emits the run's rows in order, with no keep
		err := f.decodeRun(ctx, what, sf, impl, sc, mem, c, scr, acct, batchRows, run, func(rec arrow.RecordBatch) error {
			emitted += rec.NumRows()
			emitErr = emit(rec)
			return emitErr
		})
		switch {
		case err == nil:
			continue
		case emitErr != nil || ctx.Err() != nil:
			return nil, err
		}
		// A decoding failure after a seek may be the positions' fault:
		// the ordinary path reads the rest, and fails too if the data is
		// at fault.
		return clipKeep(keep[i:], emitted), nil
	}
	return nil, nil
}

// clipKeep is keep from row `from` on.
func clipKeep(keep []rowRange, from int64) []rowRange {
	var out []rowRange
	for _, r := range keep {
		if r.end <= from {
			continue
		}
		out = append(out, rowRange{max(r.start, from), r.end})
	}
	return out
}

// seekBufs are the fetched bytes of a seekPlan, in its order.
type seekBufs struct {
	runs  [][][]byte
	whole [][]byte
}

// fetchSeek announces every range of plan (the IO scheduler coalesces
// them), then reads them.
func (f *File) fetchSeek(ctx context.Context, what string, plan *seekPlan, acct *account) (*seekBufs, error) {
	var ranges []scanner.Range
	add := func(rd seekRead) {
		if rd.r.Len > 0 {
			ranges = append(ranges, rd.r)
		}
	}
	for _, rd := range plan.whole {
		add(rd)
	}
	for _, run := range plan.runs {
		for _, rd := range run {
			add(rd)
		}
	}
	scanner.Prefetch(f.src, ranges)
	// One run's streams are decoded at a time, each with its decompression
	// buffer (given back to the codec before the next run).
	if err := f.chargeStripe(acct, what, plan.bytes, len(plan.whole)+len(plan.runs[0])); err != nil {
		return nil, err
	}
	read := func(rd seekRead) ([]byte, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if rd.r.Len == 0 {
			return nil, nil
		}
		b, err := f.readAt(rd.r.Off, rd.r.Len)
		if err != nil {
			return nil, classify(what, err)
		}
		return b, nil
	}
	out := &seekBufs{runs: make([][][]byte, len(plan.runs))}
	for _, rd := range plan.whole {
		b, err := read(rd)
		if err != nil {
			return nil, err
		}
		out.whole = append(out.whole, b)
	}
	for i, run := range plan.runs {
		for _, rd := range run {
			b, err := read(rd)
			if err != nil {
				return nil, err
			}
			out.runs[i] = append(out.runs[i], b)
		}
	}
	return out, nil
}

// skipBytes moves a new stream of key to its seek position in the first
// decompressed chunk.
func (ss *stripeStreams) skipBytes(s *stream, key streamKey) {
	at, ok := ss.seeks[key]
	if !ok || at.bytes == 0 || ss.seekErr != nil {
		return
	}
	if err := s.fill(); err != nil {
		ss.seekErr = fmt.Errorf("%v stream of column %d: %w", key.kind, key.column, err)
		return
	}
	if at.bytes > len(s.buf) {
		ss.seekErr = fmt.Errorf("%v stream of column %d: position %d past its chunk of %d bytes", key.kind, key.column, at.bytes, len(s.buf))
		return
	}
	s.pos = at.bytes
}

// skipValues discards, through skip, the values a seek position says to.
func (ss *stripeStreams) skipValues(col int, kind streamKind, skip func(n int) error) {
	at, ok := ss.seeks[streamKey{uint32(col), kind}]
	if !ok || at.values == 0 || ss.seekErr != nil {
		return
	}
	if err := skip(at.values); err != nil {
		ss.seekErr = fmt.Errorf("%v stream of column %d: skipping %d values: %w", kind, col, at.values, err)
	}
}

// boolRLE is a boolean decoder of one stream, at its seek position.
func (ss *stripeStreams) boolRLE(col int, kind streamKind) *boolRLE {
	d := newBoolRLE(ss.stream(col, kind))
	ss.skipValues(col, kind, func(n int) error { return discard[bool](d.next, n) })
	return d
}

// byteRLE is a byte RLE decoder of one stream, at its seek position.
func (ss *stripeStreams) byteRLE(col int, kind streamKind) *byteRLE {
	d := newByteRLE(ss.stream(col, kind))
	ss.skipValues(col, kind, func(n int) error { return discard[byte](d.next, n) })
	return d
}

func discardInts(d intDecoder, n int) error { return discard[int64](d.next, n) }

// discard decodes and drops n values of a decoder, a buffer at a time.
func discard[T any](next func([]T) error, n int) error {
	var tmp [512]T
	for n > 0 {
		m := min(n, len(tmp))
		if err := next(tmp[:m]); err != nil {
			return err
		}
		n -= m
	}
	return nil
}
