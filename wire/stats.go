package wire

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// MarshalStats encodes a stream's figures (scandv1.StreamStats) as the JSON
// the last message of a DoGet stream carries in app_metadata, or a plan's
// (scandv1.PlanStats) as GetFlightInfo's app_metadata: every field, under
// its proto name, in field order. It is JSON that protojson parses,
// with one difference from protojson's own output: 64-bit integers are JSON
// numbers, not strings, so that clients reading the metadata with a plain
// JSON parser (json.loads, encoding/json) get numbers, as they always have.
func MarshalStats(st proto.Message) []byte {
	var b bytes.Buffer
	writeMessage(&b, st.ProtoReflect())
	return b.Bytes()
}

// writeMessage writes every field of m, lists (PlanStats'
// late_materialization) as JSON arrays and messages as objects.
func writeMessage(b *bytes.Buffer, m protoreflect.Message) {
	b.WriteByte('{')
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(string(fd.Name())))
		b.WriteByte(':')
		if !fd.IsList() {
			writeScalar(b, fd, m.Get(fd))
			continue
		}
		list := m.Get(fd).List()
		b.WriteByte('[')
		for j := range list.Len() {
			if j > 0 {
				b.WriteByte(',')
			}
			writeScalar(b, fd, list.Get(j))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
}

// writeScalar writes one value; the stats messages have only strings,
// integers, doubles and messages of those, so nothing else needs a case.
func writeScalar(b *bytes.Buffer, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.MessageKind:
		writeMessage(b, v.Message())
	case protoreflect.StringKind:
		b.WriteString(strconv.Quote(v.String()))
	case protoreflect.Int64Kind, protoreflect.Int32Kind:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case protoreflect.DoubleKind:
		switch f := v.Float(); {
		case math.IsNaN(f):
			b.WriteString(`"NaN"`) // protojson's spelling; JSON has no NaN
		case math.IsInf(f, 1):
			b.WriteString(`"Infinity"`)
		case math.IsInf(f, -1):
			b.WriteString(`"-Infinity"`)
		default:
			b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	default:
		panic(fmt.Sprintf("wire: stats field %s has kind %v, which MarshalStats does not write", fd.Name(), fd.Kind()))
	}
}

// UnmarshalStats decodes a stream's app_metadata. Unknown fields, which a
// newer server may send, are ignored.
func UnmarshalStats(meta []byte) (*scandv1.StreamStats, error) {
	st := &scandv1.StreamStats{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(meta, st); err != nil {
		return nil, fmt.Errorf("stream stats %q: %w", truncate(meta, 200), err)
	}
	return st, nil
}

// UnmarshalPlanStats decodes a FlightInfo's app_metadata; unknown fields
// are ignored.
func UnmarshalPlanStats(meta []byte) (*scandv1.PlanStats, error) {
	st := &scandv1.PlanStats{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(meta, st); err != nil {
		return nil, fmt.Errorf("plan stats %q: %w", truncate(meta, 200), err)
	}
	return st, nil
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "..."
}
