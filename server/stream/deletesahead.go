package stream

import (
	"context"
	"fmt"

	"github.com/scand/scand/iosched"
	scandv1 "github.com/scand/scand/proto/scand/v1"
	"github.com/scand/scand/storage"
)

// Deletes ahead: a file's deletes are fetched while the files before it
// are read, as its data is (ahead.go).
//
// The stream loads a file's deletes after admission (streamdeletes.go),
// charged to its grant. Loaded in turn, every file with a deletion vector
// paid its vector's round trip (a ranged GET of the table's vector file)
// between the files' decodes; bench/delta's table of 520 files, each with
// a vector in one shared vector file, spent most of its S3 scan so. So
// the goroutine that opens a file ahead also makes its deletes ready:
// each vector's file is opened (iosched.Scheduler.Open, checked against
// the caller's scope) and its range announced (Prefetch), each delete
// file's reader opened (Config.Open) and warmed as a data file opened
// ahead is. The bytes are the scheduler's, charged to its prefetch budget
// as any read ahead (without room, nothing is read ahead and the load
// reads on demand, as before); the stream's grant pays, as before, for
// what it decodes from them when it reaches the file. The first file of
// a stream, not opened ahead, gets the same while its data file opens
// (openTask), so that its deletes' round trip overlaps the data's.
//
// What is made ready is a hint: the load takes it when it is there and
// opens the file as before otherwise, so that a delete file that is
// missing, unreadable, out of scope or corrupt fails the stream with the
// error the load always returned (a failed fetch ahead is fetched again
// by the read, which then reports it). Whatever the load does not take
// closes with the data file (Opened.Close): when the stream ends, fails
// or stops its files ahead, their deletes' buffers go back at once.

// readyDeletes are the deletes of one file made ready ahead, by their
// index in the task's deletes; nil where nothing was (an inline vector,
// a failed open). It is written by the goroutine that opens the file and
// read by the stream once that goroutine is done.
type readyDeletes struct {
	vectors []*iosched.File // a deletion vector's file, its range announced
	files   []*Opened       // a position or equality delete file, warmed
}

// warmDeletes opens t's deletes and starts fetching them, but for the
// vectors in shared files, announced already; nil when t has none.
// Failures leave their entry empty (the load repeats them).
func (c *Config) warmDeletes(ctx context.Context, t *scandv1.ScanTask, shared sharedVectors) *readyDeletes {
	if len(t.Deletes) == 0 {
		return nil
	}
	r := &readyDeletes{vectors: make([]*iosched.File, len(t.Deletes)), files: make([]*Opened, len(t.Deletes))}
	for i, d := range t.Deletes {
		if ctx.Err() != nil {
			break
		}
		switch d.Kind {
		case scandv1.RowDeletes_DELETION_VECTOR:
			if len(d.Inline) > 0 || !vectorRangeValid(d) || shared.file(d) != nil {
				continue
			}
			f, err := c.Scheduler.Open(ctx, deleteInfo(d))
			if err != nil {
				continue
			}
			if c.CheckFile(ctx, f.Info()) != nil {
				f.Close()
				continue
			}
			f.Prefetch([]iosched.Range{{Off: d.Offset, Len: d.Length}})
			r.vectors[i] = f
		case scandv1.RowDeletes_POSITION, scandv1.RowDeletes_EQUALITY:
			o, err := c.Open(ctx, deleteInfo(d))
			if err != nil {
				continue
			}
			if o.IO.Warm() != nil {
				o.Close()
				continue
			}
			o.IO.WarmData(WarmDataBytes)
			r.files[i] = o
		}
	}
	return r
}

// vector hands over the ready file of the i-th deletes' vector; nil: none.
func (r *readyDeletes) vector(i int) *iosched.File {
	if r == nil || r.vectors[i] == nil {
		return nil
	}
	f := r.vectors[i]
	r.vectors[i] = nil
	return f
}

// file hands over the ready reader of the i-th deletes' file; nil: none.
func (r *readyDeletes) file(i int) *Opened {
	if r == nil || r.files[i] == nil {
		return nil
	}
	o := r.files[i]
	r.files[i] = nil
	return o
}

// close closes what was not handed over.
func (r *readyDeletes) close() {
	if r == nil {
		return
	}
	for i, f := range r.vectors {
		if f != nil {
			f.Close()
			r.vectors[i] = nil
		}
	}
	for i, o := range r.files {
		if o != nil {
			o.Close()
			r.files[i] = nil
		}
	}
}

// openTask opens t's data file and, on a goroutine of its own meanwhile,
// makes its deletes ready (warmDeletes), so that their round trips
// overlap the data file's. warm also warms the data file (a file opened
// ahead: ahead.go). The deletes ride on the returned file, and close
// with it. shared are the stream's shared vector files, read by
// several goroutines; nobody writes them meanwhile.
func (c *Config) openTask(ctx context.Context, t *scandv1.ScanTask, warm bool, shared sharedVectors) (*Opened, error) {
	var ready chan *readyDeletes
	if len(t.Deletes) > 0 {
		ready = make(chan *readyDeletes, 1)
		go func() { ready <- c.warmDeletes(ctx, t, shared) }()
	}
	o, err := c.Open(ctx, storage.Info{Name: t.Path, Size: t.Size, Version: t.Version})
	if err == nil && warm {
		if err = o.IO.Warm(); err != nil {
			o.Close()
			o = nil
		} else {
			o.IO.WarmData(WarmDataBytes)
		}
	}
	if ready != nil {
		r := <-ready
		if err != nil {
			r.close()
			return nil, err
		}
		o.deletes = r
	}
	return o, err
}

// Vector files shared by the files of an endpoint: Spark writes the
// vectors of one DELETE into one file, each data file's at its own
// offset, so an endpoint of many files reads many ranges of one object.
// Made ready file by file, each range is a request of its own; instead
// the stream opens such a file once, when it starts, and announces every
// range its files will read, in their order: the scheduler coalesces
// neighbours (Coalesce) into a few requests, read ahead within the file's
// window and the prefetch budget, each freed once its ranges are read.
// A vector file read by a single file of the endpoint is made ready with
// that file, as above.

// sharedVectors are the vector files opened for several files of a
// stream, by vectorKey. Used by the stream's goroutine only.
type sharedVectors map[string]*iosched.File

func vectorKey(d *scandv1.RowDeletes) string {
	return fmt.Sprintf("%s\x00%d\x00%s", d.Path, d.Size, d.Version)
}

// openSharedVectors opens the vector files that more than one of tasks
// reads, and announces their ranges; nil when none is. A file it cannot
// open or check is left to each load (which reports it).
func (c *Config) openSharedVectors(ctx context.Context, tasks []*scandv1.ScanTask) sharedVectors {
	ranges := map[string][]iosched.Range{}
	first := map[string]*scandv1.RowDeletes{}
	var order []string
	for _, t := range tasks {
		for _, d := range t.Deletes {
			if d.Kind != scandv1.RowDeletes_DELETION_VECTOR || len(d.Inline) > 0 || !vectorRangeValid(d) {
				continue
			}
			k := vectorKey(d)
			if first[k] == nil {
				first[k] = d
				order = append(order, k)
			}
			ranges[k] = append(ranges[k], iosched.Range{Off: d.Offset, Len: d.Length})
		}
	}
	var sv sharedVectors
	for _, k := range order {
		if len(ranges[k]) < 2 {
			continue
		}
		f, err := c.Scheduler.Open(ctx, deleteInfo(first[k]))
		if err != nil {
			continue
		}
		if c.CheckFile(ctx, f.Info()) != nil {
			f.Close()
			continue
		}
		f.Prefetch(ranges[k])
		if sv == nil {
			sv = sharedVectors{}
		}
		sv[k] = f
	}
	return sv
}

// file is the shared vector file d reads; nil: none.
func (sv sharedVectors) file(d *scandv1.RowDeletes) *iosched.File {
	if sv == nil {
		return nil
	}
	return sv[vectorKey(d)]
}

// close closes the shared vector files.
func (sv sharedVectors) close() {
	for k, f := range sv {
		f.Close()
		delete(sv, k)
	}
}
