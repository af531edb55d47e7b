package server

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/scand/scand/iosched"
	"github.com/scand/scand/server/admission"
)

func TestToStatusCodes(t *testing.T) {
	g := admission.New(10, 0)
	grant, _ := g.Admit(context.Background(), 1)
	defer grant.Close()
	overShare := grant.Reserve(context.Background(), 11)
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{nil, codes.OK},
		{invalidf("bad"), codes.InvalidArgument},
		{tooLargef("big"), codes.ResourceExhausted},
		{fmt.Errorf("a.parquet: %w", overShare), codes.ResourceExhausted},
		{fmt.Errorf("read: %w", iosched.ErrOverBudget), codes.ResourceExhausted},
		{context.Canceled, codes.Canceled},
		{fmt.Errorf("mystery"), codes.Internal},
	} {
		if got := status.Code(toStatus(tc.err)); got != tc.want {
			t.Errorf("toStatus(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
