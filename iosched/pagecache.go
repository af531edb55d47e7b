package iosched

import (
	"context"
	"strings"

	"github.com/scand/scand/iosched/rangecache"
	"github.com/scand/scand/storage"
)

// The page cache's hook in the fetch path: every storage read of a file
// whose pages may be cached (see cachesPages) goes through
// Options.PageCache, which serves cached pages and fetches only the
// missing ones, page-aligned, one request per run of neighbouring missing
// pages. The planner and the coalescer are unchanged: they plan requests
// as before, and the cache splits each around what it holds, so
// neighbouring missing pages still go out as one GET.

// cachesPages reports whether f's reads go through the page cache: object
// store files (a name with a scheme) with a version to key them by. Local
// files are not cached: they already read at local-disk speed, and their
// version (times and inode) is weaker than an ETag.
func (f *File) cachesPages() bool {
	return f.sched.opts.PageCache != nil && !f.mapped && f.info.Version != "" && strings.Contains(f.info.Name, "://")
}

// readCached fills spans through the page cache; the bytes it serves from
// the cache are counted in Stats.BytesFromCache, the fetches it makes as
// requests, as any other.
func (f *File) readCached(ctx context.Context, spans []storage.Span) error {
	o := rangecache.Object{Store: f.sched.opts.PageCacheStore, Name: f.info.Name, Version: f.info.Version, Size: f.info.Size}
	n, err := f.sched.opts.PageCache.Read(ctx, o, spans, f.fetchPages)

	f.io.fromCache.Add(n)
	return err
}

// inObject reports whether [off, off+n) lies within the object; reads
// past its end skip the cache, so the store reports them as it does.
func (f *File) inObject(off, n int64) bool { return off >= 0 && off+n <= f.info.Size }

// fetchPages reads a run of pages, back to back, a buffer each, in one
// request: a span read where the object has them, else one read into a
// run buffer copied out.
func (f *File) fetchPages(ctx context.Context, pages []storage.Span) error {
	r, err := storage.SpanRange(pages)
	if err != nil {
		return err
	}
	return f.request(ctx, r.Off, r.End-r.Off, func(ctx context.Context) error {
		if len(pages) == 1 || f.obj.Capabilities().SpanReads {
			return f.obj.ReadSpans(ctx, pages)
		}
		buf := make([]byte, r.End-r.Off)
		if err := f.obj.ReadAt(ctx, buf, r.Off); err != nil {
			return err
		}
		for _, p := range pages {
			copy(p.Buf, buf[p.Off-r.Off:])
		}
		return nil
	})
}
