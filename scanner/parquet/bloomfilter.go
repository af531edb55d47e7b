package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"

	"github.com/scand/scand/scanner"
)

// Split-block bloom filters (parquet-format BloomFilter.md), parsed by
// hand: arrow-go's reader (metadata.BloomFilterReader) reads through its
// own io.ReaderAt calls, one or two per filter, so the IO scheduler could
// not plan them, and its Thrift types are internal to arrow-go.
//
// A filter is a BloomFilterHeader (Thrift compact) followed by numBytes
// of bitset: numBytes/32 blocks of eight 32-bit little-endian words.

const (
	// bloomMinBytes and bloomMaxBytes bound a bitset as arrow-go and
	// parquet-mr do (one block; 128 MiB).
	bloomMinBytes = 32
	bloomMaxBytes = 128 << 20
	// bloomHeaderGuess is how much is read when the footer gives no
	// bloom_filter_length: a header is about 15 bytes.
	bloomHeaderGuess = 64
)

// errBadBloomFilter marks a bloom filter whose bytes contradict the
// format or the footer. Callers ignore such a filter (the row group is
// kept and read), so it never reaches the server's error mapping; it
// wraps scanner.ErrCorrupt for the tests and the logs.
var errBadBloomFilter = fmt.Errorf("parquet: malformed bloom filter: %w", scanner.ErrCorrupt)

// bloomSalt are the split-block filter's eight odd multipliers.
var bloomSalt = [8]uint32{0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31}

// bloomFilter is a parsed split-block bitset. It is immutable, and shared
// between scans through the metadata cache.
type bloomFilter struct {
	words []uint32 // len is a multiple of 8
}

// parseBloomFilter parses a filter from b, which holds the header and at
// least its bitset; when declared is positive (the footer's
// bloom_filter_length) header and bitset must fill exactly that many
// bytes. When b holds the header but not the whole bitset (a caller that
// read only a guess of the header), the error is errShortBloom and need
// is the filter's whole length.
func parseBloomFilter(b []byte, declared int64) (_ *bloomFilter, need int64, err error) {
	headerLen, numBytes, err := parseBloomHeader(b)
	if err != nil {
		return nil, 0, err
	}
	total := int64(headerLen) + int64(numBytes)
	if declared > 0 && total != declared {
		return nil, 0, fmt.Errorf("header and %d-byte bitset take %d bytes, the footer says %d: %w", numBytes, total, declared, errBadBloomFilter)
	}
	if total > int64(len(b)) {
		return nil, total, errShortBloom
	}
	bits := b[headerLen:total]
	words := make([]uint32, len(bits)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(bits[4*i:])
	}
	return &bloomFilter{words: words}, total, nil
}

// errShortBloom says the bytes given hold the header but not the whole
// bitset.
var errShortBloom = errors.New("parquet: bloom filter bitset truncated")

// parseBloomHeader decodes a BloomFilterHeader: numBytes (1), and the
// unions algorithm (2: BLOCK), hash (3: XXHASH) and compression (4:
// UNCOMPRESSED), the only members the format defines so far. A filter
// with any other member cannot be checked, and is refused.
func parseBloomHeader(b []byte) (headerLen int, numBytes int32, err error) {
	r := thriftReader{b: b}
	var member [5]int16 // the union member seen, by field id
	seen, err := r.fields(1, func(id int16, typ byte) (bool, error) {
		switch {
		case id == 1 && typ == tcI32:
			numBytes, err = r.i32()
			return true, err
		case id >= 2 && id <= 4 && typ == tcStruct:
			member[id], err = r.unionMember()
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("%w (%w)", errBadBloomFilter, err)
	}
	if seen&0b11110 != 0b11110 {
		return 0, 0, fmt.Errorf("header lacks a required field: %w", errBadBloomFilter)
	}
	if member[2] != 1 || member[3] != 1 || member[4] != 1 {
		return 0, 0, fmt.Errorf("algorithm %d, hash %d, compression %d (only 1, 1, 1 are defined): %w", member[2], member[3], member[4], errBadBloomFilter)
	}
	if numBytes < bloomMinBytes || numBytes > bloomMaxBytes || numBytes%32 != 0 {
		return 0, 0, fmt.Errorf("bitset of %d bytes (a multiple of 32 from %d to %d): %w", numBytes, bloomMinBytes, bloomMaxBytes, errBadBloomFilter)
	}
	return r.pos, numBytes, nil
}

// unionMember reads a Thrift union whose members are empty structs and
// returns the id of the one set (0: none, -1: more than one).
func (r *thriftReader) unionMember() (int16, error) {
	var set int16
	_, err := r.fields(2, func(id int16, typ byte) (bool, error) {
		if typ != tcStruct {
			return false, nil
		}
		if set != 0 {
			set = -1
		} else {
			set = id
		}
		_, err := r.fields(3, func(int16, byte) (bool, error) { return false, nil })
		return true, err
	})
	return set, err
}

// mayContainHash is the split-block filter's check of one xxHash64 value.
func (f *bloomFilter) mayContainHash(h uint64) bool {
	blocks := uint64(len(f.words) / 8)
	block := ((h >> 32) * blocks) >> 32
	key := uint32(h)
	w := f.words[block*8 : block*8+8]
	for i, salt := range bloomSalt {
		if w[i]&(1<<((key*salt)>>27)) == 0 {
			return false
		}
	}
	return true
}

// mayContain checks a value's plain encoding (bloomfilter values are
// hashed as PLAIN encodes them; byte arrays without their length).
func (f *bloomFilter) mayContain(plain []byte) bool {
	return f.mayContainHash(xxhash.Sum64(plain))
}
