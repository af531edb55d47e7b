// Package orc reads ORC files (ORC specification v1, file versions 0.11,
// 0.12 and the pre-2.0 1.9999) into Arrow record batches. It is written
// from the specification; no ORC library is involved (LZO1X decoding
// aside, which is github.com/anchore/go-lzo).
//
// # What it owns
//
// Open reads the file tail in one request (postscript, footer, stripe
// statistics); Project resolves column names and reads the stripe footers
// (announced together through scanner.Prefetch) to size every stripe for
// the projection; Read decodes stripes. When the Source is a
// scanner.MetadataCache (the IO scheduler's files are), the parsed tail
// and the stripe footers are cached per object (kind "orc"), so only the
// first Open and Project of a file read them: a scan's GetFlightInfo pays
// for them and its DoGets read stripe data only. Before decoding a stripe it
// announces, in file order, only the byte ranges of the projected
// columns' data streams (touching streams merged), then reads exactly
// those with Source.ReadAt. Index streams (row index, bloom filters) are
// read only with a filter (rowindex.go, bloom.go): they select strides,
// and their stream positions let Read fetch and decode only the kept
// strides' byte ranges (seek.go), falling back to the whole stripe for
// encodings it cannot seek in and for malformed positions.
//
// # Statistics
//
// File implements scanner.Statistics (stats.go): GroupStats(stripe) from
// the Metadata section's stripe statistics, GroupStats(-1) from the
// footer's, typed as the Arrow columns Read returns. Open keeps the
// decompressed sections with one undecoded entry per stripe (more entries
// than stripes, or fewer, make them untrusted); a stripe's statistics are
// decoded when asked, at most one per column. Only what is true of the
// values Read returns is stated: stats.go lists what is dropped and why
// (original-writer files, NaN, binary bounds, local-time timestamps,
// encrypted columns, contradictions). Project also uses them to estimate
// decoded sizes.
//
// Metadata is decoded with protowire, not generated code (proto.go): every
// length is bounded by the bytes that hold it, and decompressed metadata
// by maxMetadataSize.
//
// # Codecs and encodings
//
// NONE, ZLIB (raw deflate, decoded by inflate.go: whole chunks straight
// into the destination, fuzzed against compress/flate), SNAPPY, LZO (raw
// LZO1X blocks, lzo.go), LZ4 (raw blocks) and ZSTD, in ORC's chunks with
// 3-byte headers and "original" (stored) chunks; a chunk may not inflate
// past the compression block size.
// Byte, boolean and integer RLE v1 and v2 (short repeat, direct, patched
// base, delta); DIRECT and DICTIONARY strings (v1 and v2); PRESENT
// streams for every type; decimals as varint128 with per-value scales,
// and DECIMAL64 (RLE v2 longs) in version 1.9999 files.
//
// # Arrow mapping
//
// It follows pyarrow.orc (Arrow C++'s ORC adapter), with the exceptions
// marked:
//
//	boolean                        bool
//	tinyint, smallint, int, bigint int8, int16, int32, int64
//	float, double                  float32, float64
//	string, varchar                utf8
//	char(n)                        utf8, as stored (padded)   [pyarrow: fixed_size_binary(n)]
//	binary                         binary
//	decimal(p,s)                   decimal128(p,s)
//	decimal without precision      decimal128(38,6), values rescaled (Hive 0.11; as ORC C++ and pyarrow)
//	date                           date32
//	timestamp                      timestamp[ns], the writer's wall-clock time (naive)
//	timestamp with local time zone timestamp[ns, tz=UTC]
//	array<T>                       list<item: T>
//	map<K,V>                       map<K, V>
//	struct<...>                    struct<...>
//	uniontype<T0,...>              sparse_union<_union_0: T0, ...>, type codes 0..n-1
//
// Every field is nullable; there is no schema or field metadata. A file
// whose root type is not a struct (old Hive files) has one column named
// "_col0".
//
// Unions are sparse, as pyarrow declares them (pyarrow itself cannot
// read union data). Arrow unions have no validity bitmap, so a null union
// row is variant 0 holding a null, as Arrow's union builders append nulls;
// it cannot be told from a non-null variant 0 whose value is null.
//
// Timestamps: ORC stores seconds since 2015-01-01 00:00:00 in the
// writer's time zone (from the stripe footer; UTC for files that name
// none, and for timestamp with local time zone) and nanoseconds. The
// reader returns the writer's wall-clock time, as ORC C++ with reader
// time zone UTC does, including its correction for writers that
// truncated negative seconds towards zero. The nanoseconds are taken as
// signed, as ORC C++ and Java take them: Arrow's ORC writer (pyarrow)
// stores -1.5 s as -1 s and -500000000 ns. Values outside timestamp[ns]
// (years before 1678 or after 2261) are an ErrUnsupported error. Time
// zone data comes from the host, or time/tzdata when it has none.
//
// # Encryption
//
// ORC column encryption keeps, besides the encrypted streams, an
// unencrypted masked copy of every encrypted column in the ordinary
// streams (the spec's data masks: nullify, redact, sha256). A reader
// without keys reads those masked values, as the Java reader does, so
// encrypted files read without error; the encrypted variants are never
// touched.
//
// # Errors and limits
//
// Errors name the file, and the stripe and column when decoding. Bytes
// that contradict the format wrap scanner.ErrCorrupt; unknown writer time
// zones, codecs and encodings wrap scanner.ErrUnsupported; a
// file without ORC magic (or an empty one) is scanner.ErrNotColumnar.
// Storage errors, cancellation and the budget's refusals pass through.
// Lengths read from the file never size an allocation by themselves:
// stream lengths are checked against the stripe's declared sizes, a
// compression chunk never inflates past the block size (ZSTD decodes
// into a buffer of that capacity, plus 16 bytes of slack for its fast
// copies, and fails when a frame declares or expands to more; ZLIB
// decodes into a buffer near 4 times the chunk, or of the block size when
// that is too small, and fails at the block size; LZO
// decodes into a buffer of min(block size, 255 times the chunk), since no
// LZO1X block expands further), a dictionary's entries must fit what its
// DICTIONARY_DATA stream can hold, strings and dictionaries grow with the
// bytes really present, runs are at most 512 values, and sizes derived
// from stream values are checked before allocation: one array of a batch
// holds at most 2^25 values (rows, or list and map elements) and 1 GiB of
// string or binary data; beyond that the reader fails with ErrUnsupported
// and a smaller BatchRows reads the file.
// Every entry point also runs under scanner.Recover.
//
// # Warnings
//
// A file version the reader does not know (anything but 0.11, 0.12 and
// 1.9999) is not refused: the file is read by the 0.12 rules, as ORC C++
// and so pyarrow read it, and File.Warnings says so (1.9999, an unstable
// format, gets a warning too, as in ORC C++). The reader has no logger:
// the caller logs Warnings, which never fails and names the file.
//
// # Memory
//
// One Read reuses, from stripe to stripe, the buffer the stripe's
// projected streams are read into, the decompression buffers, and the
// decoders' scratch (run buffers, index and length slices, dictionaries);
// decoded arrays never point into them (values are copied out). Only the
// Arrow arrays handed to the caller are allocated per batch, from
// ReadOptions.Mem; when that is Go's allocator, the value buffers of
// integer, float and double columns, which the decoder writes whole, come
// from a pool of released buffers handed out uncleared (pool.go). The reused buffers are charged to ReadOptions.Budget
// before they are allocated or grown (the stripe buffer by the stripe
// footer's stream lengths, a block-size decompression buffer per
// compressed stream, dictionaries by their LENGTH streams' total), and
// given back when the Read ends (budget.go). bench/orc measures decode
// throughput against pyarrow (docs/orc.md).
//
// A File is not safe for concurrent use.
package orc
