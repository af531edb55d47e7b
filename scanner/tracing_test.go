package scanner_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/scand/scand/internal/spans"
	"github.com/scand/scand/scanner"
)

func int64Batch(mem memory.Allocator, n int) arrow.RecordBatch {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for i := range n {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{col}, int64(n))
}

// DecodeSpans leaves emit alone outside a recording span, and under one
// gives every batch a decode span with its rows that starts where the
// previous batch was handed over: the consumer's time is not the
// reader's.
func TestDecodeSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const consumer = 20 * time.Millisecond
	emit := func(b arrow.RecordBatch) error { time.Sleep(consumer); b.Release(); return nil }

	if got := scanner.DecodeSpans(context.Background(), "a.parquet", emit); reflect.ValueOf(got).Pointer() != reflect.ValueOf(emit).Pointer() {
		t.Error("without a recording span, DecodeSpans must return emit itself")
	}

	ctx, parent := otel.Tracer("test").Start(context.Background(), "rpc")
	traced := scanner.DecodeSpans(ctx, "a.parquet", emit)
	for _, n := range []int{3, 5, 7} {
		if err := traced(int64Batch(mem, n)); err != nil {
			t.Fatal(err)
		}
	}
	parent.End()
	var decodes []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "decode" && s.Parent().SpanID() == parent.SpanContext().SpanID() {
			decodes = append(decodes, s)
		}
	}
	if len(decodes) != 3 {
		t.Fatalf("%d decode spans, want 3", len(decodes))
	}
	for i, s := range decodes {
		rows := int64(-1)
		for _, kv := range s.Attributes() {
			if kv.Key == spans.Rows {
				rows = kv.Value.AsInt64()
			}
		}
		if want := int64([]int{3, 5, 7}[i]); rows != want {
			t.Errorf("span %d: %d rows, want %d", i, rows, want)
		}
		if i > 0 && s.StartTime().Sub(decodes[i-1].EndTime()) < consumer {
			t.Errorf("span %d starts %v after the previous one ended; the consumer took %v in between",
				i, s.StartTime().Sub(decodes[i-1].EndTime()), consumer)
		}
	}
}
