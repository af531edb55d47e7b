package rangecache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// The on-disk page format: one file per page, a 32-byte header then the
// page's bytes.
//
//	0  4  magic "SCPG"
//	4  1  format version (1)
//	5  3  zero
//	8  16 key sum: SHA-256 of the page's full key (store, name, version,
//	      size, page size, page index), first 16 bytes
//	24 4  data length, little endian
//	28 4  CRC-32C of bytes 0-27 and the data
//
// The file name carries the short key (object hash, version hash, page
// index), so the index can be rebuilt from names and sizes alone; the key
// sum in the header makes a page written for another key (a hash collision
// of the short key, or a changed page size) fail verification instead of
// being served.
const (
	headerSize    = 32
	formatVersion = 1
	pageExt       = ".page"
	tmpPrefix     = "tmp-"
)

var pageMagic = [4]byte{'S', 'C', 'P', 'G'}

// ErrCorrupt reports a page file that fails verification: torn, truncated,
// bit-flipped or written for another key. Such a page is dropped and
// fetched again, never served.
var ErrCorrupt = errors.New("corrupt cache page")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type keySum [16]byte

// pageKey is a page's short key: what the index maps and the file name
// spells.
type pageKey struct {
	obj, ver uint64
	page     int64
}

// fileName is the page file's path below the cache directory: a
// subdirectory per object hash prefix keeps directories small.
func (k pageKey) fileName() string {
	return fmt.Sprintf("%02x/%016x-%016x-%d%s", k.obj>>56, k.obj, k.ver, k.page, pageExt)
}

// parseFileName is fileName's inverse, for the restart scan.
func parseFileName(dir, base string) (pageKey, bool) {
	name, ok := strings.CutSuffix(base, pageExt)
	if !ok {
		return pageKey{}, false
	}
	parts := strings.Split(name, "-")
	if len(parts) != 3 || len(parts[0]) != 16 || len(parts[1]) != 16 {
		return pageKey{}, false
	}
	obj, err1 := strconv.ParseUint(parts[0], 16, 64)
	ver, err2 := strconv.ParseUint(parts[1], 16, 64)
	page, err3 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || page < 0 || strconv.FormatInt(page, 10) != parts[2] {
		return pageKey{}, false
	}
	k := pageKey{obj: obj, ver: ver, page: page}
	if fmt.Sprintf("%02x", obj>>56) != dir {
		return pageKey{}, false
	}
	return k, true
}

// pageHeader returns the header of a page file holding data; the file is
// the header, then data.
func pageHeader(sum keySum, data []byte) []byte {
	b := make([]byte, headerSize)
	copy(b[0:4], pageMagic[:])
	b[4] = formatVersion
	copy(b[8:24], sum[:])
	binary.LittleEndian.PutUint32(b[24:28], uint32(len(data)))
	crc := crc32.Update(crc32.Checksum(b[:28], castagnoli), castagnoli, data)
	binary.LittleEndian.PutUint32(b[28:32], crc)
	return b
}

// encodePage is a page file's whole content (for tests and tools).
func encodePage(sum keySum, data []byte) []byte {
	return append(pageHeader(sum, data), data...)
}

// decodePage verifies a page file's content against the key it was read
// for and returns its data (a slice of b). Every failure wraps ErrCorrupt.
func decodePage(b []byte, sum keySum) ([]byte, error) {
	if len(b) < headerSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header", ErrCorrupt, len(b))
	}
	if err := verifyPage(b[:headerSize], b[headerSize:], sum); err != nil {
		return nil, err
	}
	return b[headerSize:], nil
}

// verifyPage checks a page file read as its header and its data (read
// apart, the data straight into the reader's buffer) against the key it
// was read for. Every failure wraps ErrCorrupt.
func verifyPage(hdr, data []byte, sum keySum) error {
	switch {
	case len(hdr) != headerSize:
		return fmt.Errorf("%w: a %d-byte header", ErrCorrupt, len(hdr))
	case !bytes.Equal(hdr[0:4], pageMagic[:]) || hdr[4] != formatVersion || hdr[5]|hdr[6]|hdr[7] != 0:
		return fmt.Errorf("%w: bad magic or format version", ErrCorrupt)
	case !bytes.Equal(hdr[8:24], sum[:]):
		return fmt.Errorf("%w: written for another key", ErrCorrupt)
	}
	n := binary.LittleEndian.Uint32(hdr[24:28])
	if int64(n) != int64(len(data)) {
		return fmt.Errorf("%w: header says %d bytes, file holds %d (torn write?)", ErrCorrupt, n, len(data))
	}
	if crc32.Update(crc32.Checksum(hdr[:28], castagnoli), castagnoli, data) != binary.LittleEndian.Uint32(hdr[28:32]) {
		return fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	return nil
}

// Object identifies one version of an object: the cache's key. A new
// version is a new key, so a cached page is never served for another
// version.
type Object struct {
	// Store tells stores apart (an S3 endpoint); Name is the object's full
	// name in it (s3://bucket/key); Version is what the scan is pinned
	// to (S3's ETag); Size is the object's length.
	Store, Name, Version string
	Size                 int64
}

func (o Object) hashes() (obj, ver uint64) {
	h := sha256.Sum256([]byte(o.Store + "\x00" + o.Name))
	v := sha256.Sum256([]byte(o.Version + "\x00" + strconv.FormatInt(o.Size, 10)))
	return binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(v[:8])
}

func (o Object) keySum(page, pageSize int64) keySum {
	h := sha256.Sum256([]byte(fmt.Sprintf("%q %q %q %d %d %d", o.Store, o.Name, o.Version, o.Size, pageSize, page)))
	var s keySum
	copy(s[:], h[:16])
	return s
}
