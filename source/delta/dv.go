package delta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/scand/scand/source"
)

// maxDVBytes bounds one deletion vector's serialized size: a portable
// roaring bitmap of every row of a file of 2^31 rows in bitmap containers
// takes 256 MiB; anything larger is not a vector a writer produced.
const maxDVBytes = 1 << 28

// dvMagic starts a serialized deletion vector (little-endian 1681511377),
// the same four bytes that start an Iceberg deletion-vector-v1 blob.
const dvMagic = 1681511377

// dvMagicNative starts a deletion vector in the older "native" layout
// (big-endian 1681511376): PROTOCOL.md's inline example is one. Its
// header is big-endian: the number of 32-bit bitmaps, then each bitmap's
// size and its standard 32-bit roaring serialization, the i-th holding
// the rows whose high 32 bits are i.
const dvMagicNative = 1681511376

// nativeToPortable rewrites a native-layout deletion vector in the
// portable layout (magic number, then the portable 64-bit roaring
// format), the one decoders read.
func nativeToPortable(b []byte) ([]byte, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("native deletion vector of %d bytes: %w", len(b), errDV)
	}
	n := binary.BigEndian.Uint32(b[4:])
	if int64(n)*4 > int64(len(b)) {
		return nil, fmt.Errorf("native deletion vector claims %d bitmaps in %d bytes: %w", n, len(b), errDV)
	}
	out := binary.LittleEndian.AppendUint32(make([]byte, 0, len(b)+int(n)*4+4), dvMagic)
	out = binary.LittleEndian.AppendUint64(out, uint64(n))
	rest := b[8:]
	for i := uint32(0); i < n; i++ {
		if len(rest) < 4 {
			return nil, fmt.Errorf("native deletion vector truncated at bitmap %d: %w", i, errDV)
		}
		size := binary.BigEndian.Uint32(rest)
		if int64(size) > int64(len(rest)-4) {
			return nil, fmt.Errorf("native deletion vector bitmap %d of %d bytes runs past the end: %w", i, size, errDV)
		}
		out = binary.LittleEndian.AppendUint32(out, i)
		out = append(out, rest[4:4+size]...)
		rest = rest[4+size:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("native deletion vector has %d bytes after its bitmaps: %w", len(rest), errDV)
	}
	return out, nil
}

// errDV marks a deletion vector descriptor that cannot be decoded.
var errDV = errors.New("invalid deletion vector descriptor")

// z85Alphabet is the Z85 encoding's alphabet (ZeroMQ RFC 32), the Base85
// variant Delta uses because it is safe in JSON.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

var z85Value = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = byte(i)
	}
	return t
}()

// z85Decode decodes Z85 text: every 5 characters are 4 bytes, big-endian.
func z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("z85 text of %d characters (not a multiple of 5): %w", len(s), errDV)
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := i; j < i+5; j++ {
			d := z85Value[s[j]]
			if d == 0xff {
				return nil, fmt.Errorf("z85 text has %q at %d, outside the alphabet: %w", s[j], j, errDV)
			}
			v = v*85 + uint64(d)
		}
		if v > 0xffffffff {
			return nil, fmt.Errorf("z85 group at %d exceeds 32 bits: %w", i, errDV)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(v))
	}
	return out, nil
}

// z85UUIDLen is the length of a UUID in Z85 (16 bytes).
const z85UUIDLen = 20

// dvFileName returns, for a descriptor of storage type "u", the deletion
// vector file's name relative to the table's directory:
// <random prefix>/deletion_vector_<uuid>.bin, the prefix being the
// characters before the 20 that encode the UUID.
func dvFileName(pathOrInlineDv string) (string, error) {
	if len(pathOrInlineDv) < z85UUIDLen {
		return "", fmt.Errorf("relative deletion vector path %q is shorter than a Z85 UUID: %w", truncate(pathOrInlineDv, 60), errDV)
	}
	prefix := pathOrInlineDv[:len(pathOrInlineDv)-z85UUIDLen]
	raw, err := z85Decode(pathOrInlineDv[len(prefix):])
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(prefix, "/\\") || prefix == "." || prefix == ".." {
		return "", fmt.Errorf("deletion vector prefix %q is not a directory name: %w", prefix, errDV)
	}
	name := "deletion_vector_" + formatUUID(raw) + ".bin"
	if prefix != "" {
		name = prefix + "/" + name
	}
	return name, nil
}

// formatUUID writes 16 bytes as a UUID's canonical text.
func formatUUID(b []byte) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}

// frameDV wraps a serialized deletion vector (magic number, then the
// portable 64-bit roaring bitmap) in the framing a Delta deletion vector
// file stores it with, which an Iceberg deletion-vector-v1 blob shares: its
// size as 4 big-endian bytes, the data, and the data's CRC-32 as 4
// big-endian bytes. An inline vector framed so decodes like one read from
// a file.
func frameDV(data []byte) []byte {
	out := make([]byte, 0, 8+len(data))
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(data))
}

// dvDelete maps a descriptor to the source contract's Delete: a range of a
// file (Offset at the vector's size field, Length covering size, data and
// checksum), or the inline bytes framed the same way. resolve turns a
// table-relative name or an absolute path into a storage name.
func dvDelete(d *dvDescriptor, resolve func(rel string, absolute bool) (string, error)) (source.Delete, error) {
	del := source.Delete{Kind: source.DeletionVector, Cardinality: d.Cardinality}
	switch d.StorageType {
	case "i":
		raw, err := z85Decode(d.PathOrInlineDv)
		if err != nil {
			return del, err
		}
		if int64(len(raw)) < d.SizeInBytes || int64(len(raw))-d.SizeInBytes >= 4 {
			return del, fmt.Errorf("inline deletion vector decodes to %d bytes, not the %d its descriptor says: %w", len(raw), d.SizeInBytes, errDV)
		}
		raw = raw[:d.SizeInBytes]
		if len(raw) >= 4 && binary.BigEndian.Uint32(raw) == dvMagicNative {
			if raw, err = nativeToPortable(raw); err != nil {
				return del, err
			}
		}
		if len(raw) < 4 || binary.LittleEndian.Uint32(raw) != dvMagic {
			return del, fmt.Errorf("inline deletion vector does not start with the magic number %d: %w", dvMagic, errDV)
		}
		del.Inline = frameDV(raw)
		return del, nil
	case "u", "p":
		var name string
		var err error
		if d.StorageType == "u" {
			rel, ferr := dvFileName(d.PathOrInlineDv)
			if ferr != nil {
				return del, ferr
			}
			name, err = resolve(rel, false)
		} else {
			name, err = resolve(d.PathOrInlineDv, true)
		}
		if err != nil {
			return del, err
		}
		del.Object.Name = name
		if d.Offset != nil {
			del.Offset = *d.Offset
		}
		del.Length = d.SizeInBytes + 8
		return del, nil
	}
	return del, fmt.Errorf("deletion vector storage type %q: %w", d.StorageType, errDV)
}
