package orc

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/scalar"

	"github.com/scand/scand/scanner"
)

// ORC bloom filters (BLOOM_FILTER and BLOOM_FILTER_UTF8 streams), one per
// row-index stride, as ORC's Java BloomFilter writes them: a bit set of
// 64-bit words and k hash functions derived from one 64-bit hash by
// double hashing. Integers (of every width) and doubles (floats widened)
// hash as Thomas Wang's 64-bit integer hash of the value (a double's IEEE
// bits); strings as Murmur3's 64-bit hash (seed 104729) of their UTF-8
// bytes.
//
// Which filters are used (orcBloomUsable):
//   - BLOOM_FILTER_UTF8: integers, floats, doubles, strings and varchars.
//   - BLOOM_FILTER (the first format): integers, floats and doubles only;
//     its strings were hashed in the writer's default charset (ORC-101).
//   - No filter of an ORC C++ writer before 1.7 (or without a software
//     version: 1.6.0 wrote none): 1.6.0 to 1.6.11 hashed numbers inconsistently (ORC-1024,
//     orc-examples/bad_bloom_filter_1.6.*.orc).
// Other types (dates, timestamps, decimals, char, binary) are never
// looked up.

// orcBloom is one stride's filter.
type orcBloom struct {
	k    int32
	bits []uint64
}

// errBadORCBloom marks a bloom filter that contradicts the format; the
// stripe's filters are then ignored (docs/indexes.md).
var errBadORCBloom = fmt.Errorf("orc: malformed bloom filter: %w", scanner.ErrCorrupt)

// maxBloomHashes bounds numHashFunctions (Java computes a handful).
const maxBloomHashes = 64

// parseBloomIndex decodes a BloomFilterIndex: one BloomFilter per stride
// (field 1), each with numHashFunctions (1) and the bit set as repeated
// fixed64 (2, BLOOM_FILTER) or bytes (3, BLOOM_FILTER_UTF8).
func parseBloomIndex(b []byte) ([]*orcBloom, error) {
	var out []*orcBloom
	err := walk(b, func(f pbField) error {
		if f.num != 1 || f.b == nil {
			return nil
		}
		bf, err := parseBloom(f.b)
		out = append(out, bf)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", errBadORCBloom, err)
	}
	return out, nil
}

func parseBloom(b []byte) (*orcBloom, error) {
	bf := &orcBloom{}
	err := walk(b, func(f pbField) error {
		switch {
		case f.num == 1:
			bf.k = int32(min(f.u, math.MaxInt32))
		case f.num == 2 && f.typ == 1: // fixed64, not packed
			bf.bits = append(bf.bits, f.u)
		case f.num == 2 && f.b != nil, f.num == 3 && f.b != nil:
			if len(f.b)%8 != 0 {
				return errProto
			}
			for i := 0; i+8 <= len(f.b); i += 8 {
				bf.bits = append(bf.bits, binary.LittleEndian.Uint64(f.b[i:]))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if bf.k < 1 || bf.k > maxBloomHashes || len(bf.bits) == 0 || len(bf.bits) > math.MaxInt32/64 {
		return nil, fmt.Errorf("%d hash functions over %d words", bf.k, len(bf.bits))
	}
	return bf, nil
}

// testHash is Java's BloomFilter.testHash.
func (b *orcBloom) testHash(h uint64) bool {
	h1, h2 := int32(h), int32(h>>32)
	numBits := int32(len(b.bits) * 64)
	for i := int32(1); i <= b.k; i++ {
		c := h1 + i*h2
		if c < 0 {
			c = ^c
		}
		pos := c % numBits
		if b.bits[pos>>6]&(1<<(uint(pos)&63)) == 0 {
			return false
		}
	}
	return true
}

// longHash is Thomas Wang's 64-bit mix, as ORC's BloomFilter.getLongHash
// (Java's >> on a long is arithmetic).
func longHash(v int64) uint64 {
	k := v
	k = (^k) + (k << 21)
	k ^= k >> 24
	k = (k + (k << 3)) + (k << 8)
	k ^= k >> 14
	k = (k + (k << 2)) + (k << 4)
	k ^= k >> 28
	k += k << 31
	return uint64(k)
}

// murmur3Hash64 is ORC's Murmur3.hash64 (seed 104729).
func murmur3Hash64(data []byte) uint64 {
	const (
		c1   = 0x87c37b91114253d5
		c2   = 0x4cf5ad432745937f
		seed = 104729
	)
	h := uint64(seed)
	n := len(data) / 8
	for i := 0; i < n; i++ {
		k := binary.LittleEndian.Uint64(data[8*i:])
		k *= c1
		k = bits.RotateLeft64(k, 31)
		k *= c2
		h ^= k
		h = bits.RotateLeft64(h, 27)*5 + 0x52dce729
	}
	var k1 uint64
	tail := data[8*n:]
	for i := len(tail) - 1; i >= 0; i-- {
		k1 ^= uint64(tail[i]) << (8 * i)
	}
	if len(tail) > 0 {
		k1 *= c1
		k1 = bits.RotateLeft64(k1, 31)
		k1 *= c2
		h ^= k1
	}
	h ^= uint64(len(data))
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// bloomHash is the hash a literal of column type t is looked up by; ok is
// false for a literal or type that is not looked up (see above).
func bloomHash(t typeKind, utf8 bool, v scalar.Scalar) (uint64, bool) {
	if !v.IsValid() {
		return 0, false
	}
	switch s := v.(type) {
	case *scalar.Int8:
		return longHash(int64(s.Value)), t == kindByte
	case *scalar.Int16:
		return longHash(int64(s.Value)), t == kindShort
	case *scalar.Int32:
		return longHash(int64(s.Value)), t == kindInt
	case *scalar.Int64:
		return longHash(s.Value), t == kindLong
	case *scalar.Float32:
		f := float64(s.Value)
		return longHash(int64(math.Float64bits(f))), t == kindFloat && !math.IsNaN(f)
	case *scalar.Float64:
		return longHash(int64(math.Float64bits(s.Value))), t == kindDouble && !math.IsNaN(s.Value)
	case *scalar.String:
		return murmur3Hash64(s.Data()), utf8 && (t == kindString || t == kindVarchar)
	}
	return 0, false
}

// bloomUsable says whether the file's bloom filters may be trusted at all.
func (f *File) bloomUsable() bool {
	if !f.ft.hasWriter || f.ft.writer != 1 { // 1: ORC C++
		return true
	}
	// ORC C++ writes its version alone ("2.2.2"); readers print it
	// after the writer's name.
	v := strings.TrimPrefix(f.ft.softwareVersion, "ORC C++ ")
	major, rest, _ := strings.Cut(v, ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	return err1 == nil && err2 == nil && (ma > 1 || ma == 1 && mi >= 7)
}
