package deletes

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/scand/scand/scanner"
)

// bitmapMagic opens a serialized deletion vector: bytes D1 D3 39 64, the
// little-endian uint32 1681511377 of Delta's RoaringBitmapArray, which
// Iceberg's deletion-vector-v1 blob adopted.
var bitmapMagic = [4]byte{0xD1, 0xD3, 0x39, 0x64}

// Framing sizes: a big-endian uint32 length before the magic and bitmap,
// a big-endian CRC-32 after them.
const (
	frameLengthBytes = 4
	frameCRCBytes    = 4
	// minBitmapEntryBytes is the least one (key, 32-bit bitmap) pair of the
	// portable format takes: a 4-byte key, a 4-byte cookie and a 4-byte
	// container count. It bounds the entry count a header may declare.
	minBitmapEntryBytes = 12
)

// DecodeDeletionVector decodes a framed deletion vector: an Iceberg
// Puffin "deletion-vector-v1" blob, or the bytes of one vector in a Delta
// deletion-vector file (from its offset, sizeInBytes + 8 bytes long). The
// frame is a big-endian uint32 length of what follows up to the CRC, the
// magic, the portable 64-bit roaring bitmap, and a big-endian CRC-32 of
// the magic and bitmap. cardinality, when not negative, is the number of
// deleted rows the table's metadata records; a vector holding another
// number is corrupt. Errors wrap scanner.ErrCorrupt.
func DecodeDeletionVector(blob []byte, cardinality int64) (*roaring64.Bitmap, error) {
	if len(blob) < frameLengthBytes+len(bitmapMagic)+frameCRCBytes {
		return nil, corruptf("deletion vector of %d bytes is shorter than its frame", len(blob))
	}
	n := binary.BigEndian.Uint32(blob)
	if uint64(n) != uint64(len(blob)-frameLengthBytes-frameCRCBytes) {
		return nil, corruptf("deletion vector declares %d bytes of bitmap, the blob holds %d", n, len(blob)-frameLengthBytes-frameCRCBytes)
	}
	body := blob[frameLengthBytes : frameLengthBytes+int(n)]
	want := binary.BigEndian.Uint32(blob[frameLengthBytes+int(n):])
	if got := crc32.ChecksumIEEE(body); got != want {
		return nil, corruptf("deletion vector checksum is %08x, its frame says %08x", got, want)
	}
	return DecodeBitmap(body, cardinality)
}

// DecodeBitmap decodes the magic and portable 64-bit roaring bitmap of a
// deletion vector without its frame: a Delta inline vector, after base85.
// cardinality is as for DecodeDeletionVector.
func DecodeBitmap(b []byte, cardinality int64) (bm *roaring64.Bitmap, err error) {
	if len(b) < len(bitmapMagic) || !bytes.Equal(b[:len(bitmapMagic)], bitmapMagic[:]) {
		return nil, corruptf("deletion vector does not start with the roaring bitmap magic D1D33964")
	}
	// The bitmap keeps slices of the bytes it was decoded from (roaring's
	// zero-copy decoding, with copy-on-write): compact returns a copy of
	// its own.
	payload, err := compact(b[len(bitmapMagic):])
	if err != nil {
		return nil, err
	}
	defer scanner.Recover(&err, "decode deletion vector")
	bm = roaring64.New()
	read, err := bm.FromUnsafeBytes(payload)
	if err != nil {
		return nil, corruptf("deletion vector bitmap: %v", err)
	}
	if read != int64(len(payload)) { // compact checked the length: a safeguard
		return nil, corruptf("deletion vector bitmap ends at byte %d of %d", read, len(payload))
	}
	if got := bm.GetCardinality(); cardinality >= 0 && got != uint64(cardinality) {
		return nil, corruptf("deletion vector holds %d positions, the table's metadata says %d", got, cardinality)
	}
	return bm, nil
}

// compact walks the portable 64-bit format before roaring64 decodes it,
// and returns a copy without its empty bitmaps: the entry count must fit
// in the bytes (roaring64 allocates it first), keys must ascend strictly
// (lookups binary-search them), and each 32-bit bitmap must decode and be
// coherent. Java's writer emits an empty bitmap for each unused key below
// the largest, which roaring64 does not expect (its iterator fails on
// them), so they are left out of the copy.
func compact(p []byte) (out []byte, err error) {
	defer scanner.Recover(&err, "decode deletion vector")
	if len(p) < 8 {
		return nil, corruptf("deletion vector bitmap of %d bytes has no entry count", len(p))
	}
	count := binary.LittleEndian.Uint64(p)
	if count > uint64(len(p)-8)/minBitmapEntryBytes {
		return nil, corruptf("deletion vector declares %d bitmaps in %d bytes", count, len(p))
	}
	out = make([]byte, 8, len(p))
	kept := uint64(0)
	off := 8
	var prev uint32
	for i := uint64(0); i < count; i++ {
		if len(p)-off < 4 {
			return nil, corruptf("deletion vector bitmap %d has no key", i)
		}
		k := binary.LittleEndian.Uint32(p[off:])
		off += 4
		if i > 0 && k <= prev {
			return nil, corruptf("deletion vector keys out of order (%d after %d)", k, prev)
		}
		prev = k
		// Decoded as roaring64's FromUnsafeBytes decodes it, so that what
		// is checked here is what DecodeBitmap gets.
		b := roaring.New()
		n, err := b.FromUnsafeBytes(p[off:])
		if err != nil || n <= 0 || n > int64(len(p)-off) {
			return nil, corruptf("deletion vector bitmap %d (key %d): %v", i, k, err)
		}
		if err := b.Validate(); err != nil {
			return nil, corruptf("deletion vector bitmap %d (key %d): %v", i, k, err)
		}
		if !b.IsEmpty() {
			out = append(out, p[off-4:off+int(n)]...)
			kept++
		}
		off += int(n)
	}
	if off != len(p) {
		return nil, corruptf("deletion vector has %d bytes after its last bitmap", len(p)-off)
	}
	binary.LittleEndian.PutUint64(out, kept)
	return out, nil
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), scanner.ErrCorrupt)
}

// EncodeDeletionVector frames bm as DecodeDeletionVector reads it. scand
// writes no tables; tests and fuzz seeds use it.
func EncodeDeletionVector(bm *roaring64.Bitmap) ([]byte, error) {
	var body bytes.Buffer
	body.Write(bitmapMagic[:])
	if _, err := bm.WriteTo(&body); err != nil {
		return nil, err
	}
	out := make([]byte, frameLengthBytes, frameLengthBytes+body.Len()+frameCRCBytes)
	binary.BigEndian.PutUint32(out, uint32(body.Len()))
	out = append(out, body.Bytes()...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(body.Bytes())), nil
}
