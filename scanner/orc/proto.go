package orc

// This file decodes the ORC metadata messages (orc_proto.proto of the ORC v1
// specification) with protowire instead of generated code. Hand decoding
// keeps every length and count under this package's control: a hostile
// footer can only make us allocate in proportion to its own size, which the
// callers have already bounded by the file size.
//
// Field numbers are facts of the format and must never change.

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

var errProto = errors.New("malformed protobuf message")

// pbField is one decoded field of a message.
type pbField struct {
	num protowire.Number
	typ protowire.Type
	u   uint64 // varint, fixed32 and fixed64 values
	b   []byte // length-delimited values (aliases the input)
}

// walk calls fn for each field of the message m. Unknown fields and wire
// types are skipped, as protobuf requires.
func walk(m []byte, fn func(f pbField) error) error {
	for len(m) > 0 {
		num, typ, n := protowire.ConsumeTag(m)
		if n < 0 {
			return errProto
		}
		m = m[n:]
		f := pbField{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.u, n = protowire.ConsumeVarint(m)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(m)
			f.u = uint64(v)
		case protowire.Fixed64Type:
			f.u, n = protowire.ConsumeFixed64(m)
		case protowire.BytesType:
			f.b, n = protowire.ConsumeBytes(m)
		default:
			n = protowire.ConsumeFieldValue(num, typ, m)
		}
		if n < 0 {
			return errProto
		}
		m = m[n:]
		if err := fn(f); err != nil {
			return err
		}
	}
	return nil
}

// uints appends the values of a repeated integer field, packed or not.
func (f pbField) uints(dst []uint64) ([]uint64, error) {
	switch f.typ {
	case protowire.VarintType:
		return append(dst, f.u), nil
	case protowire.BytesType:
		b := f.b
		for len(b) > 0 {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, errProto
			}
			dst = append(dst, v)
			b = b[n:]
		}
		return dst, nil
	}
	return nil, errProto
}

func (f pbField) sint() int64 { return protowire.DecodeZigZag(f.u) }

func (f pbField) u32() uint32 {
	if f.u > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(f.u)
}

// compressionKind is PostScript.compression.
type compressionKind uint32

const (
	compNone   compressionKind = 0
	compZlib   compressionKind = 1
	compSnappy compressionKind = 2
	compLZO    compressionKind = 3
	compLZ4    compressionKind = 4
	compZstd   compressionKind = 5
)

func (c compressionKind) String() string {
	switch c {
	case compNone:
		return "NONE"
	case compZlib:
		return "ZLIB"
	case compSnappy:
		return "SNAPPY"
	case compLZO:
		return "LZO"
	case compLZ4:
		return "LZ4"
	case compZstd:
		return "ZSTD"
	}
	return fmt.Sprintf("compression kind %d", uint32(c))
}

// postScript is the uncompressed message at the end of the file.
type postScript struct {
	footerLength           uint64 // 1
	compression            compressionKind
	compressionBlockSize   uint64 // 3; 0 when absent
	version                []uint64
	metadataLength         uint64 // 5
	writerVersion          uint32 // 6
	stripeStatisticsLength uint64 // 7
	magic                  string // 8000
}

func parsePostScript(b []byte) (*postScript, error) {
	ps := &postScript{}
	err := walk(b, func(f pbField) error {
		var err error
		switch f.num {
		case 1:
			ps.footerLength = f.u
		case 2:
			ps.compression = compressionKind(f.u32())
		case 3:
			ps.compressionBlockSize = f.u
		case 4:
			ps.version, err = f.uints(ps.version)
		case 5:
			ps.metadataLength = f.u
		case 6:
			ps.writerVersion = f.u32()
		case 7:
			ps.stripeStatisticsLength = f.u
		case 8000:
			ps.magic = string(f.b)
		}
		return err
	})
	return ps, err
}

// typeKind is Type.kind.
type typeKind uint32

const (
	kindBoolean          typeKind = 0
	kindByte             typeKind = 1
	kindShort            typeKind = 2
	kindInt              typeKind = 3
	kindLong             typeKind = 4
	kindFloat            typeKind = 5
	kindDouble           typeKind = 6
	kindString           typeKind = 7
	kindBinary           typeKind = 8
	kindTimestamp        typeKind = 9
	kindList             typeKind = 10
	kindMap              typeKind = 11
	kindStruct           typeKind = 12
	kindUnion            typeKind = 13
	kindDecimal          typeKind = 14
	kindDate             typeKind = 15
	kindVarchar          typeKind = 16
	kindChar             typeKind = 17
	kindTimestampInstant typeKind = 18
)

var kindNames = [...]string{"boolean", "tinyint", "smallint", "int", "bigint", "float", "double",
	"string", "binary", "timestamp", "array", "map", "struct", "uniontype", "decimal", "date",
	"varchar", "char", "timestamp with local time zone"}

func (k typeKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("type kind %d", uint32(k))
}

type stringPair struct{ key, value string }

// orcType is one node of the flattened type tree (Footer.types).
type orcType struct {
	kind         typeKind
	subtypes     []uint64
	fieldNames   []string
	maxLength    uint32
	precision    uint32
	scale        uint32
	hasPrecision bool
	attributes   []stringPair
}

func parseType(b []byte) (orcType, error) {
	var t orcType
	err := walk(b, func(f pbField) error {
		var err error
		switch f.num {
		case 1:
			t.kind = typeKind(f.u32())
		case 2:
			t.subtypes, err = f.uints(t.subtypes)
		case 3:
			t.fieldNames = append(t.fieldNames, string(f.b))
		case 4:
			t.maxLength = f.u32()
		case 5:
			t.precision = f.u32()
			t.hasPrecision = true
		case 6:
			t.scale = f.u32()
		case 7:
			var p stringPair
			err = walk(f.b, func(g pbField) error {
				switch g.num {
				case 1:
					p.key = string(g.b)
				case 2:
					p.value = string(g.b)
				}
				return nil
			})
			t.attributes = append(t.attributes, p)
		}
		return err
	})
	return t, err
}

// stripeInfo is Footer.stripes[i].
type stripeInfo struct {
	offset, indexLength, dataLength, footerLength, numberOfRows uint64
	encryptStripeID                                             uint64
	encryptedLocalKeys                                          [][]byte
}

func parseStripeInfo(b []byte) (stripeInfo, error) {
	var s stripeInfo
	err := walk(b, func(f pbField) error {
		switch f.num {
		case 1:
			s.offset = f.u
		case 2:
			s.indexLength = f.u
		case 3:
			s.dataLength = f.u
		case 4:
			s.footerLength = f.u
		case 5:
			s.numberOfRows = f.u
		case 6:
			s.encryptStripeID = f.u
		case 7:
			s.encryptedLocalKeys = append(s.encryptedLocalKeys, f.b)
		}
		return nil
	})
	return s, err
}

// columnStats is ColumnStatistics. Presence is recorded for every field
// stats.go trusts, since an absent field is unknown, not zero.
type columnStats struct {
	numberOfValues    uint64 // 1
	hasNumberOfValues bool
	hasNull           bool // 10
	hasHasNull        bool
	bytesOnDisk       uint64 // 11

	intStats       *intStats    // 2
	doubleStats    *doubleStats // 3
	stringStats    *stringStats // 4
	bucketCounts   []uint64     // 5
	decimalStats   *stringStats // 6 (min, max, sum as decimal strings)
	dateStats      *intStats    // 7 (days)
	binarySum      *int64       // 8
	timestampStats *tsStats     // 9
	collection     *collStats   // 12
}

type intStats struct {
	min, max, sum          int64
	hasMin, hasMax, hasSum bool
}

type doubleStats struct {
	min, max, sum          float64
	hasMin, hasMax, hasSum bool
}

type stringStats struct {
	min, max, lower, upper string
	sumStr                 string // decimal sum
	sum                    int64  // total length for strings
	hasMin, hasMax, hasSum bool
	hasLower, hasUpper     bool // lowerBound/upperBound (ORC-203)
}

// tsStats is TimestampStatistics: milliseconds since the epoch, and the
// sub-millisecond nanoseconds plus one (0 stays "absent" on the wire).
type tsStats struct {
	min, max, minUTC, maxUTC int64
	minNanos, maxNanos       int32
	hasMinUTC, hasMaxUTC     bool
	hasMinNanos, hasMaxNanos bool
}

type collStats struct{ minChildren, maxChildren, totalChildren uint64 }

// parseIntStats reads IntegerStatistics (minimum, maximum, sum as sint64).
func parseIntStats(b []byte) (*intStats, error) {
	s := &intStats{}
	err := walk(b, func(g pbField) error {
		switch g.num {
		case 1:
			s.min, s.hasMin = g.sint(), true
		case 2:
			s.max, s.hasMax = g.sint(), true
		case 3:
			s.sum, s.hasSum = g.sint(), true
		}
		return nil
	})
	return s, err
}

func parseColumnStats(b []byte) (columnStats, error) {
	var c columnStats
	err := walk(b, func(f pbField) error {
		var err error
		switch f.num {
		case 1:
			c.numberOfValues, c.hasNumberOfValues = f.u, true
		case 2:
			c.intStats, err = parseIntStats(f.b)
		case 3:
			c.doubleStats, err = parseDoubleStats(f.b)
		case 4:
			c.stringStats, err = parseStringStats(f.b, false)
		case 5:
			err = walk(f.b, func(g pbField) error {
				var err error
				if g.num == 1 {
					c.bucketCounts, err = g.uints(c.bucketCounts)
				}
				return err
			})
		case 6:
			c.decimalStats, err = parseStringStats(f.b, true)
		case 7:
			// DateStatistics: minimum and maximum as sint32 (fields 1, 2),
			// the layout of IntegerStatistics without its sum.
			c.dateStats, err = parseIntStats(f.b)
		case 8:
			err = walk(f.b, func(g pbField) error {
				if g.num == 1 {
					v := g.sint()
					c.binarySum = &v
				}
				return nil
			})
		case 9:
			c.timestampStats, err = parseTimestampStats(f.b)
		case 10:
			c.hasNull, c.hasHasNull = f.u != 0, true
		case 11:
			c.bytesOnDisk = f.u
		case 12:
			c.collection, err = parseCollStats(f.b)
		}
		return err
	})
	return c, err
}

// parseDoubleStats reads DoubleStatistics (minimum, maximum, sum as double).
func parseDoubleStats(b []byte) (*doubleStats, error) {
	s := &doubleStats{}
	err := walk(b, func(g pbField) error {
		switch g.num {
		case 1:
			s.min, s.hasMin = math.Float64frombits(g.u), true
		case 2:
			s.max, s.hasMax = math.Float64frombits(g.u), true
		case 3:
			s.sum, s.hasSum = math.Float64frombits(g.u), true
		}
		return nil
	})
	return s, err
}

// parseStringStats reads StringStatistics or, when decimal is set,
// DecimalStatistics (the same layout, with the sum as a decimal string).
func parseStringStats(b []byte, decimal bool) (*stringStats, error) {
	s := &stringStats{}
	err := walk(b, func(g pbField) error {
		switch g.num {
		case 1:
			s.min, s.hasMin = string(g.b), true
		case 2:
			s.max, s.hasMax = string(g.b), true
		case 3:
			if decimal {
				s.sumStr = string(g.b)
			} else {
				s.sum = g.sint()
			}
			s.hasSum = true
		case 4:
			s.lower, s.hasLower = string(g.b), true
		case 5:
			s.upper, s.hasUpper = string(g.b), true
		}
		return nil
	})
	return s, err
}

// parseTimestampStats reads TimestampStatistics.
func parseTimestampStats(b []byte) (*tsStats, error) {
	s := &tsStats{}
	err := walk(b, func(g pbField) error {
		switch g.num {
		case 1:
			s.min = g.sint()
		case 2:
			s.max = g.sint()
		case 3:
			s.minUTC, s.hasMinUTC = g.sint(), true
		case 4:
			s.maxUTC, s.hasMaxUTC = g.sint(), true
		case 5:
			s.minNanos, s.hasMinNanos = int32(g.u), true
		case 6:
			s.maxNanos, s.hasMaxNanos = int32(g.u), true
		}
		return nil
	})
	return s, err
}

// parseCollStats reads CollectionStatistics (lists and maps).
func parseCollStats(b []byte) (*collStats, error) {
	s := &collStats{}
	err := walk(b, func(g pbField) error {
		switch g.num {
		case 1:
			s.minChildren = g.u
		case 2:
			s.maxChildren = g.u
		case 3:
			s.totalChildren = g.u
		}
		return nil
	})
	return s, err
}

var errTooManyStats = errors.New("more statistics entries than the footer allows")

// rawEntries returns the field-1 entries of a message (StripeStatistics'
// ColumnStatistics, Metadata's StripeStatistics) undecoded, aliasing b.
// At most limit entries are accepted: the caller passes what the footer
// declares (columns, stripes), so the slice headers cost no more than the
// footer's own parsed types and stripes, however small the entries are.
func rawEntries(b []byte, limit int) ([][]byte, error) {
	var out [][]byte
	err := walk(b, func(f pbField) error {
		if f.num != 1 {
			return nil
		}
		if f.typ != protowire.BytesType {
			return errProto
		}
		if len(out) >= limit {
			return errTooManyStats
		}
		out = append(out, f.b)
		return nil
	})
	return out, err
}

// parseStatsList decodes the column statistics of one stripe (a
// StripeStatistics message), at most limit of them.
func parseStatsList(b []byte, limit int) ([]columnStats, error) {
	raw, err := rawEntries(b, limit)
	if err != nil {
		return nil, err
	}
	return parseStatsEntries(raw)
}

// parseStatsEntries decodes raw ColumnStatistics messages.
func parseStatsEntries(raw [][]byte) ([]columnStats, error) {
	out := make([]columnStats, len(raw))
	for i, r := range raw {
		var err error
		if out[i], err = parseColumnStats(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Encryption (ORC-14): masks, keys and variants of encrypted subtrees.
type encryption struct {
	masks       []dataMask
	keys        []encryptionKey
	variants    []encryptionVariant
	keyProvider uint32
}

type dataMask struct {
	name    string
	params  []string
	columns []uint64
}

type encryptionKey struct {
	name      string
	version   uint32
	algorithm uint32
}

type encryptionVariant struct {
	root, key        uint32
	encryptedKey     []byte
	stripeStatistics []streamInfo
	fileStatistics   []byte
}

func parseEncryption(b []byte) (*encryption, error) {
	e := &encryption{}
	err := walk(b, func(f pbField) error {
		var err error
		switch f.num {
		case 1:
			var m dataMask
			err = walk(f.b, func(g pbField) error {
				var err error
				switch g.num {
				case 1:
					m.name = string(g.b)
				case 2:
					m.params = append(m.params, string(g.b))
				case 3:
					m.columns, err = g.uints(m.columns)
				}
				return err
			})
			e.masks = append(e.masks, m)
		case 2:
			var k encryptionKey
			err = walk(f.b, func(g pbField) error {
				switch g.num {
				case 1:
					k.name = string(g.b)
				case 2:
					k.version = g.u32()
				case 3:
					k.algorithm = g.u32()
				}
				return nil
			})
			e.keys = append(e.keys, k)
		case 3:
			var v encryptionVariant
			err = walk(f.b, func(g pbField) error {
				switch g.num {
				case 1:
					v.root = g.u32()
				case 2:
					v.key = g.u32()
				case 3:
					v.encryptedKey = g.b
				case 4:
					s, err := parseStream(g.b)
					if err != nil {
						return err
					}
					v.stripeStatistics = append(v.stripeStatistics, s)
				case 5:
					v.fileStatistics = g.b
				}
				return nil
			})
			e.variants = append(e.variants, v)
		case 4:
			e.keyProvider = f.u32()
		}
		return err
	})
	return e, err
}

// calendar is Footer.calendar.
type calendar uint32

const (
	calendarUnknown           calendar = 0
	calendarJulianGregorian   calendar = 1
	calendarProlepticGregoria calendar = 2
)

// footer is the file Footer.
type footer struct {
	headerLength    uint64
	contentLength   uint64
	stripes         []stripeInfo
	types           []orcType
	metadata        []stringPair
	numberOfRows    uint64
	statistics      [][]byte // ColumnStatistics, undecoded (stats.go decodes on demand)
	rowIndexStride  uint32
	writer          uint32
	hasWriter       bool
	encryption      *encryption
	calendar        calendar
	softwareVersion string
}

func parseFooter(b []byte) (*footer, error) {
	ft := &footer{}
	err := walk(b, func(f pbField) error {
		var err error
		switch f.num {
		case 1:
			ft.headerLength = f.u
		case 2:
			ft.contentLength = f.u
		case 3:
			var s stripeInfo
			s, err = parseStripeInfo(f.b)
			ft.stripes = append(ft.stripes, s)
		case 4:
			var t orcType
			t, err = parseType(f.b)
			ft.types = append(ft.types, t)
		case 5:
			var p stringPair
			err = walk(f.b, func(g pbField) error {
				switch g.num {
				case 1:
					p.key = string(g.b)
				case 2:
					p.value = string(g.b)
				}
				return nil
			})
			ft.metadata = append(ft.metadata, p)
		case 6:
			ft.numberOfRows = f.u
		case 7:
			ft.statistics = append(ft.statistics, f.b)
		case 8:
			ft.rowIndexStride = f.u32()
		case 9:
			ft.writer, ft.hasWriter = f.u32(), true
		case 10:
			ft.encryption, err = parseEncryption(f.b)
		case 11:
			ft.calendar = calendar(f.u32())
		case 12:
			ft.softwareVersion = string(f.b)
		}
		return err
	})
	return ft, err
}

// streamKind is Stream.kind.
type streamKind uint32

const (
	streamPresent         streamKind = 0
	streamData            streamKind = 1
	streamLength          streamKind = 2
	streamDictionaryData  streamKind = 3
	streamDictionaryCount streamKind = 4
	streamSecondary       streamKind = 5
	streamRowIndex        streamKind = 6
	streamBloomFilter     streamKind = 7
	streamBloomFilterUTF8 streamKind = 8
	streamEncryptedIndex  streamKind = 9
	streamEncryptedData   streamKind = 10
	streamStripeStats     streamKind = 100
	streamFileStats       streamKind = 101
)

var streamKindNames = map[streamKind]string{
	streamPresent: "PRESENT", streamData: "DATA", streamLength: "LENGTH",
	streamDictionaryData: "DICTIONARY_DATA", streamDictionaryCount: "DICTIONARY_COUNT",
	streamSecondary: "SECONDARY", streamRowIndex: "ROW_INDEX", streamBloomFilter: "BLOOM_FILTER",
	streamBloomFilterUTF8: "BLOOM_FILTER_UTF8", streamEncryptedIndex: "ENCRYPTED_INDEX",
	streamEncryptedData: "ENCRYPTED_DATA", streamStripeStats: "STRIPE_STATISTICS",
	streamFileStats: "FILE_STATISTICS",
}

func (k streamKind) String() string {
	if s, ok := streamKindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("stream kind %d", uint32(k))
}

// isIndex tells whether streams of this kind live in the stripe's index
// area (read only for pushdown).
func (k streamKind) isIndex() bool {
	return k == streamRowIndex || k == streamBloomFilter || k == streamBloomFilterUTF8 || k == streamEncryptedIndex
}

type streamInfo struct {
	kind   streamKind
	column uint32
	length uint64
}

func parseStream(b []byte) (streamInfo, error) {
	var s streamInfo
	err := walk(b, func(f pbField) error {
		switch f.num {
		case 1:
			s.kind = streamKind(f.u32())
		case 2:
			s.column = f.u32()
		case 3:
			s.length = f.u
		}
		return nil
	})
	return s, err
}

// encodingKind is ColumnEncoding.kind.
type encodingKind uint32

const (
	encDirect       encodingKind = 0
	encDictionary   encodingKind = 1
	encDirectV2     encodingKind = 2
	encDictionaryV2 encodingKind = 3
)

func (k encodingKind) String() string {
	switch k {
	case encDirect:
		return "DIRECT"
	case encDictionary:
		return "DICTIONARY"
	case encDirectV2:
		return "DIRECT_V2"
	case encDictionaryV2:
		return "DICTIONARY_V2"
	}
	return fmt.Sprintf("encoding %d", uint32(k))
}

func (k encodingKind) isV2() bool { return k == encDirectV2 || k == encDictionaryV2 }

func (k encodingKind) isDictionary() bool { return k == encDictionary || k == encDictionaryV2 }

type columnEncoding struct {
	kind           encodingKind
	dictionarySize uint32
	bloomEncoding  uint32
}

func parseEncoding(b []byte) (columnEncoding, error) {
	var e columnEncoding
	err := walk(b, func(f pbField) error {
		switch f.num {
		case 1:
			e.kind = encodingKind(f.u32())
		case 2:
			e.dictionarySize = f.u32()
		case 3:
			e.bloomEncoding = f.u32()
		}
		return nil
	})
	return e, err
}

type stripeEncryptionVariant struct {
	streams   []streamInfo
	encodings []columnEncoding
}

// stripeFooter is the StripeFooter message at the end of each stripe.
type stripeFooter struct {
	streams        []streamInfo
	columns        []columnEncoding
	writerTimezone string
	hasTimezone    bool
	encryption     []stripeEncryptionVariant
}

func parseStripeFooter(b []byte) (*stripeFooter, error) {
	sf := &stripeFooter{}
	err := walk(b, func(f pbField) error {
		var err error
		switch f.num {
		case 1:
			var s streamInfo
			s, err = parseStream(f.b)
			sf.streams = append(sf.streams, s)
		case 2:
			var e columnEncoding
			e, err = parseEncoding(f.b)
			sf.columns = append(sf.columns, e)
		case 3:
			sf.writerTimezone, sf.hasTimezone = string(f.b), true
		case 4:
			var v stripeEncryptionVariant
			err = walk(f.b, func(g pbField) error {
				switch g.num {
				case 1:
					s, err := parseStream(g.b)
					if err != nil {
						return err
					}
					v.streams = append(v.streams, s)
				case 2:
					e, err := parseEncoding(g.b)
					if err != nil {
						return err
					}
					v.encodings = append(v.encodings, e)
				}
				return nil
			})
			sf.encryption = append(sf.encryption, v)
		}
		return err
	})
	return sf, err
}
