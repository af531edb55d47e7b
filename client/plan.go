package client

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/protobuf/proto"

	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// Plan is what a scan would do, from the server's plan (GetFlightInfo),
// without reading any rows. [Client.Explain] returns it.
//
// The per-file and per-endpoint figures come from decoding the endpoints'
// tickets. The ticket format (scand.v1.ScanTask) is internal to scand and
// may change between versions: the Go client decodes it because it ships
// in the same module as the server, and other clients should treat tickets
// as opaque. A ticket that does not decode leaves its endpoint's path empty
// and its rows at zero rather than failing the plan.
type Plan struct {
	// Schema is the unified schema every batch of the scan has.
	Schema *arrow.Schema
	// TotalRecords is the number of rows the scan returns (after the
	// limit); TotalBytes the compressed bytes of the projected columns in
	// the planned row groups.
	TotalRecords, TotalBytes int64
	// Files are the files the scan reads, in scan order.
	Files []PlanFile
	// Endpoints are the splits, one DoGet each, in scan order.
	Endpoints []PlanEndpoint
	// Stats say what the server's pruning kept, from the FlightInfo's
	// app_metadata. They are nil from servers older than filters, and when
	// the metadata does not decode (as with tickets, the plan is described,
	// not failed).
	Stats *PlanStats
	// Info is the FlightInfo the plan was decoded from; [Client.ScanInfo]
	// reads it, so a scan can run exactly the plan that was explained.
	Info *flight.FlightInfo
}

// PlanFile is one file of a plan.
type PlanFile struct {
	// Path is the file as the server resolved it (root-relative path or
	// URI).
	Path string
	// Size is the file's size in bytes when the scan was planned.
	Size int64
	// Format is "parquet", "orc" or "unknown".
	Format string
	// Endpoints is the number of splits of the file; Rows the rows they
	// return (after the limit).
	Endpoints int
	Rows      int64
}

// PlanEndpoint is one split of a plan: consecutive row groups (ORC
// stripes) of one file, or several whole small files read one after
// another in one stream (More).
type PlanEndpoint struct {
	Path      string
	RowGroups []int
	// Rows is the number of rows in the split's row groups (of Path), from
	// the file's metadata.
	Rows int64
	// Limit caps the rows the endpoint returns, across all its files; 0
	// means all of them.
	Limit int64
	// More are the further files of the endpoint, in the order it reads
	// them, each with its own Path, RowGroups and Rows (their Limit is 0).
	More []PlanEndpoint
}

// AllRows is the number of rows in all of the endpoint's files.
func (e PlanEndpoint) AllRows() int64 {
	rows := e.Rows
	for _, m := range e.More {
		rows += m.Rows
	}
	return rows
}

// Returns is the number of rows the endpoint returns: AllRows, capped by
// Limit.
func (e PlanEndpoint) Returns() int64 {
	if rows := e.AllRows(); e.Limit == 0 || e.Limit >= rows {
		return rows
	}
	return e.Limit
}

// files are the endpoint's files in order (itself without More first),
// each with the rows it returns once the endpoint's limit is applied in
// that order.
func (e PlanEndpoint) files() (files []PlanEndpoint, returns []int64) {
	head := e
	head.More, head.Limit = nil, 0
	files = append([]PlanEndpoint{head}, e.More...)
	left := e.Returns()
	for _, f := range files {
		n := min(f.Rows, left)
		returns, left = append(returns, n), left-n
	}
	return files, returns
}

// endpointOf decodes one endpoint's ScanTask.
func endpointOf(task *scandv1.ScanTask) PlanEndpoint {
	pe := PlanEndpoint{Path: task.GetPath(), Rows: task.GetRows(), Limit: task.GetLimit()}
	for _, g := range task.GetRowGroups() {
		pe.RowGroups = append(pe.RowGroups, int(g))
	}
	for _, m := range task.GetMore() {
		pe.More = append(pe.More, endpointOf(m))
	}
	return pe
}

// EstimatedReads estimates the storage requests the scan will cost. Every
// endpoint costs at least one (coalesced) read; a file whose footer is not
// in the server's metadata cache costs one more. So low assumes every
// footer is cached and high that none is. It is an estimate: large column
// chunks are fetched in several parts, and neighbouring ranges may merge.
// [Scan.Stats] of a real scan has the exact figure.
func (p *Plan) EstimatedReads() (low, high int) {
	return len(p.Endpoints), len(p.Endpoints) + len(p.Files)
}

// Explain plans req on the server, like [Client.Info], and decodes the
// plan into a [Plan]. It reads no rows.
func (c *Client) Explain(ctx context.Context, req *scandv1.ScanRequest) (*Plan, error) {
	info, err := c.Info(ctx, req)
	if err != nil {
		return nil, err
	}
	return c.planOf(info)
}

// planOf decodes info into a Plan.
func (c *Client) planOf(info *flight.FlightInfo) (*Plan, error) {
	p := &Plan{
		TotalRecords: info.GetTotalRecords(),
		TotalBytes:   info.GetTotalBytes(),
		Info:         info,
	}
	if meta := info.GetAppMetadata(); len(meta) > 0 {
		p.Stats, _ = parsePlanStats(meta)
	}
	if len(info.GetSchema()) > 0 {
		schema, err := flight.DeserializeSchema(info.GetSchema(), c.opts.allocator())
		if err != nil {
			return nil, fmt.Errorf("client: decode scan schema from %s: %w", c.addr, err)
		}
		p.Schema = schema
	}
	files := map[string]int{} // path -> index in p.Files
	for _, ep := range info.GetEndpoint() {
		task := &scandv1.ScanTask{}
		if err := proto.Unmarshal(ticketPayload(ep.GetTicket().GetTicket()), task); err != nil {
			p.Endpoints = append(p.Endpoints, PlanEndpoint{})
			continue
		}
		pe := endpointOf(task)
		p.Endpoints = append(p.Endpoints, pe)
		tasks := append([]*scandv1.ScanTask{task}, task.GetMore()...)
		each, returns := pe.files()
		for j, f := range each {
			i, ok := files[f.Path]
			if !ok {
				i = len(p.Files)
				files[f.Path] = i
				p.Files = append(p.Files, PlanFile{Path: f.Path, Size: tasks[j].GetSize(), Format: formatName(tasks[j].GetFormat())})
			}
			p.Files[i].Endpoints++
			p.Files[i].Rows += returns[j]
		}
	}
	return p, nil
}

func formatName(f scandv1.Format) string {
	switch f {
	case scandv1.Format_FORMAT_PARQUET:
		return "parquet"
	case scandv1.Format_FORMAT_ORC:
		return "orc"
	}
	return "unknown"
}

// String renders the plan as a readable report: totals, what a filter
// pruned (when the plan has one and the server said), the files, the
// endpoints with their row groups, and the schema.
func (p *Plan) String() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	low, high := p.EstimatedReads()
	bytesPer := ""
	if n := len(p.Endpoints); n > 0 {
		bytesPer = fmt.Sprintf(", %s per endpoint on average", fmtBytes(p.TotalBytes/int64(n)))
	}
	fmt.Fprintf(tw, "rows\t%s\n", fmtInt(p.TotalRecords))
	fmt.Fprintf(tw, "bytes to read\t%s (%s, compressed, projected columns)\n", fmtBytes(p.TotalBytes), fmtInt(p.TotalBytes))
	fmt.Fprintf(tw, "files\t%d\n", len(p.Files))
	fmt.Fprintf(tw, "endpoints\t%d%s\n", len(p.Endpoints), bytesPer)
	if low == high {
		fmt.Fprintf(tw, "estimated reads\t%d\n", low)
	} else {
		fmt.Fprintf(tw, "estimated reads\t%d to %d (estimate: 1 or more per endpoint, +1 per file whose footer is not cached)\n", low, high)
	}
	tw.Flush()
	p.Stats.writeTo(&b)

	if len(p.Files) > 0 {
		b.WriteString("\nfiles:\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  path\tformat\tsize\tendpoints\trows\n")
		for _, f := range p.Files {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\n", f.Path, f.Format, fmtBytes(f.Size), f.Endpoints, fmtInt(f.Rows))
		}
		tw.Flush()
	}
	if len(p.Endpoints) > 0 {
		b.WriteString("\nendpoints:\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  #\tpath\trow groups\trows\n")
		for i, e := range p.Endpoints {
			writeEndpoint(tw, i, e)
		}
		tw.Flush()
	}
	if p.Schema != nil {
		b.WriteString("\nschema:\n")
		for _, f := range p.Schema.Fields() {
			null := ""
			if !f.Nullable {
				null = " not null"
			}
			fmt.Fprintf(&b, "  %s: %s%s\n", f.Name, f.Type, null)
		}
	}
	return b.String()
}

// fmtGroups prints row group indexes with runs collapsed: "0-3, 7".
func fmtGroups(gs []int) string {
	if len(gs) == 0 {
		return "-"
	}
	var parts []string
	for i := 0; i < len(gs); {
		j := i
		for j+1 < len(gs) && gs[j+1] == gs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(gs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", gs[i], gs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// fmtInt prints n with thousands separators: 1,234,567.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtBytes prints a byte count in binary units: 1.5 MiB.
func fmtBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// ticketPayload is the ScanTask inside a signed ticket (a
// scand.v1.SignedEnvelope), read without verifying: the client only
// describes it, and the server verifies it when it comes back.
func ticketPayload(ticket []byte) []byte {
	env := &scandv1.SignedEnvelope{}
	if err := proto.Unmarshal(ticket, env); err != nil || len(env.GetMac()) == 0 {
		return ticket
	}
	claims := &scandv1.SignedClaims{}
	if err := proto.Unmarshal(env.GetClaims(), claims); err != nil {
		return ticket
	}
	return claims.GetPayload()
}

// writeEndpoint writes endpoint i's lines of the endpoints table: one per
// file, the further files of an endpoint of several marked "+", with the
// endpoint's limit on its last line.
func writeEndpoint(w io.Writer, i int, e PlanEndpoint) {
	if len(e.More) == 0 {
		rows := fmtInt(e.Rows)
		if e.Limit > 0 && e.Limit < e.Rows {
			rows = fmt.Sprintf("%s of %s (limit)", fmtInt(e.Limit), fmtInt(e.Rows))
		}
		path := e.Path
		if path == "" {
			path = "(ticket not decoded)"
		}
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s\n", i, path, fmtGroups(e.RowGroups), rows)
		return
	}
	files, _ := e.files()
	for j, f := range files {
		index := "+"
		if j == 0 {
			index = fmt.Sprint(i)
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", index, f.Path, fmtGroups(f.RowGroups), fmtInt(f.Rows))
	}
	if all := e.AllRows(); e.Limit > 0 && e.Limit < all {
		fmt.Fprintf(w, "  \t(endpoint %d: %d files)\t\t%s of %s (limit)\n", i, len(files), fmtInt(e.Limit), fmtInt(all))
	} else {
		fmt.Fprintf(w, "  \t(endpoint %d: %d files)\t\t%s\n", i, len(files), fmtInt(all))
	}
}
