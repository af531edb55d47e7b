package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/scand/scand/iosched"
)

func planOne(t *testing.T, c flight.Client, name string) *flight.FlightInfo {
	t.Helper()
	info, err := c.GetFlightInfo(context.Background(), &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// A client that opens a stream and never reads it loses the stream after
// the idle timeout, with a status that says why, and the memory comes back.
func TestStreamIdleTimeout(t *testing.T) {
	dir := wideFile(t, 200000)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	_, addr := serveForTest(t, onRoot(t, dir, iosched.Options{}, Config{Mem: mem, Limits: Limits{StreamIdleTimeout: 300 * time.Millisecond}}))
	c := dialForTest(t, addr)
	info := planOne(t, c, "wide.parquet")
	s, err := c.DoGet(context.Background(), info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // never read: the server's sends block, then time out
	var last error
	for {
		if _, err := s.Recv(); err != nil {
			last = err
			break
		}
	}
	if status.Code(last) != codes.DeadlineExceeded || !strings.Contains(last.Error(), "--stream-idle-timeout") {
		t.Fatalf("stalled stream ended with %v; want DEADLINE_EXCEEDED naming --stream-idle-timeout", last)
	}
	assertReleased(t, mem)
}

// Past the per-peer cap DoGet is RESOURCE_EXHAUSTED; a stream that ends
// gives its place back.
func TestMaxStreamsPerPeer(t *testing.T) {
	dir := wideFile(t, 200000)
	_, addr := serveForTest(t, onRoot(t, dir, iosched.Options{}, Config{Limits: Limits{MaxStreamsPerPeer: 2}}))
	c := dialForTest(t, addr)
	info := planOne(t, c, "wide.parquet")
	ctx, cancel := context.WithCancel(context.Background())
	var open []flight.FlightService_DoGetClient
	for range 2 {
		s, err := c.DoGet(ctx, info.Endpoint[0].Ticket)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Recv(); err != nil {
			t.Fatal(err)
		}
		open = append(open, s)
	}
	s, err := c.DoGet(context.Background(), info.Endpoint[0].Ticket)
	if err == nil {
		_, err = s.Recv()
	}
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "--max-streams-per-peer") {
		t.Fatalf("third stream: %v; want RESOURCE_EXHAUSTED naming --max-streams-per-peer", err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := c.DoGet(context.Background(), info.Endpoint[0].Ticket)
		if err == nil {
			if _, err = s.Recv(); err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no stream after the others were cancelled: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = open
}

// Row groups of a ticket are distinct and ascending: a ticket repeating one
// group 100,000 times would stream it 100,000 times.
func TestTicketRowGroupsAscending(t *testing.T) {
	dir := wideFile(t, 8000)
	c := testServerWith(t, onRoot(t, dir, iosched.Options{}, Config{Planning: Planning{SplitBytes: 1 << 40}}))
	info := planOne(t, c, "wide.parquet")
	task := openTestTicket(t, info.Endpoint[0].Ticket.Ticket)
	for _, groups := range [][]int32{{0, 0}, {1, 0}, make([]int32, 1000)} {
		task.RowGroups = groups
		b, _ := proto.Marshal(task)
		// Signed with the server's key: what only a key holder could send.
		s, err := c.DoGet(context.Background(), &flight.Ticket{Ticket: signTestTicket(t, b)})
		if err == nil {
			_, err = s.Recv()
		}
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("row groups %v: %v; want INVALID_ARGUMENT", groups[:min(len(groups), 3)], err)
		}
	}
}

func TestStatusMessagesAreBounded(t *testing.T) {
	long := strings.Repeat("é", 5000) // 10,000 bytes
	st, _ := status.FromError(toStatus(invalidf("unknown column %q", long)))
	if len(st.Message()) > maxMessageLen+40 || !strings.HasSuffix(st.Message(), "more bytes)") {
		t.Fatalf("message of %d bytes: ...%q", len(st.Message()), st.Message()[len(st.Message())-40:])
	}
	if !strings.HasPrefix(st.Message(), "unknown column") {
		t.Errorf("message lost its head: %q", st.Message()[:40])
	}
}
