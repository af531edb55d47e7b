package stream

import (
	"fmt"
	"testing"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// TestTicketRows: a rows_only task's rows per file, within its limit,
// less what a resumed stream skips.
func TestTicketRows(t *testing.T) {
	more := []*scandv1.ScanTask{{Rows: 20}, {Rows: 30}}
	for _, tc := range []struct {
		task *scandv1.ScanTask
		want string
	}{
		{&scandv1.ScanTask{Rows: 10}, "[10]"},
		{&scandv1.ScanTask{Rows: 10, More: more}, "[10 20 30]"},
		{&scandv1.ScanTask{Rows: 10, More: more, Limit: 25}, "[10 15]"},
		{&scandv1.ScanTask{Rows: 10, More: more, SkipRows: 15}, "[15 30]"},
		{&scandv1.ScanTask{Rows: 10, More: more, Limit: 25, SkipRows: 12}, "[13]"},
		{&scandv1.ScanTask{Rows: 10, Limit: 5, SkipRows: 5}, "[]"},
		{&scandv1.ScanTask{Rows: 0}, "[]"},
	} {
		if got := fmt.Sprint(ticketRows(tc.task)); got != tc.want {
			t.Errorf("rows %d more %d limit %d skip %d: %s, want %s", tc.task.Rows, len(tc.task.More), tc.task.Limit, tc.task.SkipRows, got, tc.want)
		}
	}
	if RowsFromTicket(&scandv1.ScanTask{RowsOnly: true, RowFilter: &scandv1.ScanTask_Filter{Filter: "x > 1"}}) ||
		RowsFromTicket(&scandv1.ScanTask{RowsOnly: true, More: []*scandv1.ScanTask{{Deletes: []*scandv1.RowDeletes{{}}}}}) ||
		RowsFromTicket(&scandv1.ScanTask{}) || !RowsFromTicket(&scandv1.ScanTask{RowsOnly: true}) {
		t.Error("RowsFromTicket")
	}
}
