package server

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A filter of many repeated terms costs terms x rows to evaluate; past
// filter.MaxTerms it is RESOURCE_EXHAUSTED naming the limit, at planning,
// before a row is read.
func TestFilterTermCap(t *testing.T) {
	dir := t.TempDir()
	rec := sampleRecord(0, 10)
	writeParquet(t, dir, "a.parquet", rec, 10)
	rec.Release()
	c, _ := checkedServer(t, dir)
	many := strings.TrimSuffix(strings.Repeat("id > 0 AND ", 50_000), " AND ")
	_, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"a.parquet"}, "filter": many})
	if s, _ := status.FromError(err); s.Code() != codes.ResourceExhausted || !strings.Contains(s.Message(), "filter.MaxTerms") {
		t.Errorf("50,000 ANDed terms: %v, want ResourceExhausted naming filter.MaxTerms", err)
	}
	res, err := scanJSON(context.Background(), c, map[string]any{"paths": []string{"a.parquet"},
		"filter": strings.TrimSuffix(strings.Repeat("id >= 0 AND ", 500), " AND ")})
	if err != nil {
		t.Fatalf("500 ANDed terms: %v", err)
	}
	defer res.release()
	if res.rows() != 10 {
		t.Errorf("500 ANDed terms: %d rows, want 10", res.rows())
	}
}
