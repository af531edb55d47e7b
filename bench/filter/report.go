package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

type reportInfo struct {
	scale          float64
	repeats, extra int // rounds actually run
	latency        time.Duration
	scand          string
	peer           map[string]any
	stopped        string
}

func mb(n int64) string { return fmt.Sprintf("%.2f", float64(n)/1e6) }

func ratio(a, b time.Duration) string {
	if a <= 0 || b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a.Seconds()/b.Seconds())
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

// missed is a target missed on a query, to be profiled.
type missed struct {
	q       *query
	noCache bool   // on scand no-cache
	what    string // the target
	ratio   float64
}

// toProfile picks the missed targets worth a profile within the run's
// time: the worst (b) and the two worst (c), worst first.
func toProfile(miss []missed) (pick []missed, skipped int) {
	sort.SliceStable(miss, func(i, j int) bool {
		if miss[i].what != miss[j].what {
			return miss[i].what < miss[j].what
		}
		return miss[i].ratio > miss[j].ratio
	})
	n := map[string]int{}
	for _, m := range miss {
		if limit := map[string]int{"(b) wall": 1, "(c)": 2}[m.what]; n[m.what] < limit {
			n[m.what]++
			pick = append(pick, m)
			continue
		}
		skipped++
	}
	return pick, skipped
}

// printReport prints the table, the PlanStats and the targets, and returns
// the missed targets that a CPU profile may explain (wall times).
func printReport(w io.Writer, res *results, info reportInfo) []missed {
	m := res.m
	fmt.Fprintf(w, "bench/filter: filters on a hive-partitioned events data set, scand vs pyarrow.dataset vs DuckDB\n\n")
	fmt.Fprintf(w, "scale %g: %d rows, %d files, %.1f MB of snappy Parquet, %d columns (%d in the files + day in the path), row groups of %d rows (%d in all)\n",
		info.scale, m.Rows, len(m.Files), float64(m.Bytes)/1e6, m.Columns, m.Columns-1, m.RowGroupRows, m.rowGroups())
	var days []string
	for i, d := range m.Days {
		days = append(days, fmt.Sprintf("%s %d", d[5:], m.DayRows[i]))
	}
	fmt.Fprintf(w, "days (rows): %s\n", strings.Join(days, ", "))
	fmt.Fprintf(w, "S3: versitygw <- toxiproxy (+%s per response) <- counting proxy; scand %s; pyarrow %v, duckdb %v (threads %v); %d CPUs\n",
		info.latency, info.scand, info.peer["pyarrow"], info.peer["duckdb"], info.peer["duckdb_threads"], runtime.NumCPU())
	fmt.Fprintf(w, "rounds: 1 warm-up + %d timed (every query, every engine, order rotating) + %d extra of scand alone on the 100 %% queries\n", info.repeats, info.extra)
	if info.stopped != "" {
		fmt.Fprintf(w, "STOPPED EARLY: %s\n", info.stopped)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "GETs, MB: object GETs and their response bytes at the counting proxy (planning included; range over the timed runs,")
	fmt.Fprintln(w, "MB the median); reads, srv MB: scand's own figures, the sum of StreamStats.reads and bytes_fetched over the streams")
	fmt.Fprintln(w, "(footers read while planning are not in them); duckdb reads local copies: no GETs. wall: min / median / max;")
	fmt.Fprintln(w, "vs pa: median / pyarrow's median, same query. scand no-cache (--meta-cache 1: reads every footer it needs, as")
	fmt.Fprintln(w, "pyarrow does) runs only the ts and day queries below 100 % (targets a and b). plan: scand's GetFlightInfo")
	fmt.Fprintln(w, "(listing, footers, pruning), median, part of wall.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| %-11s | %-14s | %9s | %7s | %7s | %8s | %8s | %-23s | %5s | %s |\n",
		"query", "engine", "rows", "GETs", "reads", "MB", "srv MB", "wall s min / med / max", "vs pa", "note")
	fmt.Fprintf(w, "|%s|%s|%s:|%s:|%s:|%s:|%s:|%s|%s:|%s|\n", dash(13), dash(16), dash(10), dash(8), dash(8), dash(9), dash(9), dash(25), dash(6), dash(6))
	var mismatches, errs []string
	for _, q := range m.Queries {
		pa := median(ok(res.timed(q, "pyarrow")))
		for _, e := range res.engines {
			all := res.timed(q, e)
			runs := ok(all)
			var notes []string
			for _, r := range all {
				if r.err != nil {
					notes = append(notes, "error: "+firstLine(r.err.Error(), 80))
					errs = append(errs, fmt.Sprintf("%s on %s: %s", q.Name, e, firstLine(r.err.Error(), 200)))
					break
				}
			}
			if len(all) == 0 {
				continue
			}
			if len(runs) == 0 {
				fmt.Fprintf(w, "| %-11s | %-14s | %9s | %7s | %7s | %8s | %8s | %-23s | %5s | %s |\n", q.Name, e, "-", "-", "-", "-", "-", "-", "-", strings.Join(notes, "; "))
				continue
			}
			var gets, bytes, reads, srvBytes []int64
			rows := runs[len(runs)-1].rows
			for _, r := range runs {
				gets = append(gets, r.net.Gets)
				bytes = append(bytes, r.net.Bytes)
				reads = append(reads, r.stats.Reads)
				srvBytes = append(srvBytes, r.stats.BytesFetched)
				if r.rows != q.Rows {
					rows = r.rows
				}
			}
			if rows != q.Rows {
				notes = append(notes, fmt.Sprintf("ROWS: want %d", q.Rows))
				mismatches = append(mismatches, fmt.Sprintf("%s on %s: %d rows, want %d", q.Name, e, rows, q.Rows))
			}
			getS, mbS, readS, srvS := span(gets), mb(medianInt(bytes)), "-", "-"
			if runs[0].scand {
				readS, srvS = span(reads), mb(medianInt(srvBytes))
			}
			if e == "duckdb" {
				getS, mbS = "local", "-"
			} else {
				if n := filesTouched(m, runs); n < len(m.Files) {
					notes = append(notes, fmt.Sprintf("touched %d of %d files", n, len(m.Files)))
				}
			}
			if runs[0].scand {
				var plans []int64
				for _, r := range runs {
					plans = append(plans, int64(r.plan))
				}
				notes = append(notes, fmt.Sprintf("plan %.3f s", time.Duration(medianInt(plans)).Seconds()))
			}
			t := walls(runs)
			vs := "-"
			if e != "pyarrow" {
				vs = ratio(median(runs), pa)
			}
			fmt.Fprintf(w, "| %-11s | %-14s | %9d | %7s | %7s | %8s | %8s | %-23s | %5s | %s |\n",
				q.Name, e, rows, getS, readS, mbS, srvS,
				fmt.Sprintf("%.3f / %.3f / %.3f", t[0].Seconds(), median(runs).Seconds(), t[len(t)-1].Seconds()),
				vs, strings.Join(notes, "; "))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "scand's PlanStats (FlightInfo.app_metadata of the last timed run, scand no-cache where it ran):")
	for _, q := range m.Queries {
		runs := ok(res.timed(q, "scand no-cache"))
		if len(runs) == 0 {
			runs = ok(res.timed(q, "scand"))
		}
		if len(runs) == 0 {
			fmt.Fprintf(w, "  %-11s no run\n", q.Name)
			continue
		}
		p := runs[len(runs)-1].planStats
		if p == nil {
			fmt.Fprintf(w, "  %-11s no PlanStats in the FlightInfo (server without filter support?)\n", q.Name)
			continue
		}
		fmt.Fprintf(w, "  %-11s files %d (pruned by partition %d, by stats %d), row groups %d (pruned %d), MB without filter %s, with %s, rows <= %d of %d; filter %q\n",
			q.Name, p.GetFiles(), p.GetFilesPrunedByPartition(), p.GetFilesPrunedByStats(), p.GetRowGroups(), p.GetRowGroupsPruned(),
			mb(p.GetBytesWithoutFilter()), mb(p.GetBytesWithFilter()), p.GetRowsWithFilter(), p.GetRowsWithoutFilter(), p.GetFilter())
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "targets:")
	var miss []missed
	targetA(w, res)
	miss = append(miss, targetB(w, res)...)
	miss = append(miss, targetC(w, res)...)
	fmt.Fprintln(w)
	if len(mismatches) == 0 && len(errs) == 0 {
		fmt.Fprintln(w, "rows: every engine returned the expected rows on every query")
	}
	for _, s := range mismatches {
		fmt.Fprintln(w, "rows WRONG: "+s)
	}
	for _, s := range errs {
		fmt.Fprintln(w, "error: "+s)
	}
	return miss
}

// filesTouched is the number of the data set's files any of runs GET or
// HEAD (pyarrow also HEADs the prefix, which is not a file).
func filesTouched(m *manifest, runs []*measurement) int {
	seen := map[string]bool{}
	for _, r := range runs {
		for k := range r.net.PerKey {
			if m.file(k) != nil {
				seen[k] = true
			}
		}
	}
	return len(seen)
}

// targetA: partition filters touch only the files of kept days.
func targetA(w io.Writer, res *results) {
	for _, q := range res.m.Queries {
		if q.Column != "day" || q.Target >= 100 {
			continue
		}
		kept := map[string]bool{}
		nkept := 0
		for _, f := range res.m.Files {
			if slices.Contains(q.Days, f.Day) {
				kept[f.Path] = true
				nkept++
			}
		}
		var parts []string
		pass, any := true, false
		for _, e := range []string{"scand", "scand no-cache"} {
			runs := ok(res.timed(q, e))
			if len(runs) == 0 {
				parts = append(parts, e+": no run")
				pass = false
				continue
			}
			any = true
			bad := map[string]int64{}
			var gets []int64
			for _, r := range runs {
				gets = append(gets, r.net.Gets)
				for k, n := range r.net.PerKey {
					if res.m.file(k) != nil && !kept[k] {
						bad[k] += n
					}
				}
			}
			var badKeys []string
			for k := range bad {
				badKeys = append(badKeys, k)
			}
			sort.Strings(badKeys)
			s := fmt.Sprintf("%s: GETs %s per run, requests on pruned files %d", e, span(gets), sumMap(bad))
			if len(badKeys) > 0 {
				s += fmt.Sprintf(" (%d files, e.g. %s)", len(badKeys), badKeys[0])
				pass = false
			}
			if wrongRows(res, q, e) {
				s += ", WRONG ROWS"
				pass = false
			}
			parts = append(parts, s)
		}
		fmt.Fprintf(w, "  (a) %s %-11s kept %d of %d files; %s\n", verdict(pass && any), q.Name+":", nkept, len(res.m.Files), strings.Join(parts, "; "))
	}
}

// wrongRows reports whether any run of q on engine returned other rows
// than the data hold: a target met with wrong rows is not met.
func wrongRows(res *results, q *query, engine string) bool {
	for _, r := range ok(res.timed(q, engine)) {
		if r.rows != q.Rows {
			return true
		}
	}
	return false
}

func sumMap(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// targetB: 0.01 % and 1 % on ts: bytes and wall time.
func targetB(w io.Writer, res *results) (miss []missed) {
	for _, q := range res.m.Queries {
		if q.Column != "ts" || q.Target > 1 {
			continue
		}
		rgBytes, footers, groups := res.m.boundB(q)
		bound := 2 * (rgBytes + footers)
		runs := ok(res.timed(q, "scand no-cache"))
		pa := median(ok(res.timed(q, "pyarrow")))
		warm := median(ok(res.timed(q, "scand")))
		if len(runs) == 0 || pa == 0 {
			fmt.Fprintf(w, "  (b) MISS %-11s not measured (scand no-cache runs %d, pyarrow median %v)\n", q.Name+":", len(runs), pa)
			continue
		}
		var worst int64
		for _, r := range runs {
			worst = max(worst, r.net.Bytes)
		}
		med := median(runs)
		wrong, rowsOK := "", !wrongRows(res, q, "scand no-cache")
		if !rowsOK {
			wrong = "; WRONG ROWS"
		}
		fmt.Fprintf(w, "  (b) %s %-11s bytes: scand no-cache fetched at most %s MB <= 2 x (%d row groups %s MB + %d footers %s MB) = %s MB (%.2fx the bound)%s\n",
			verdict(rowsOK && worst <= bound), q.Name+":", mb(worst), groups, mb(rgBytes), len(res.m.Files), mb(footers), mb(bound), float64(worst)/float64(bound), wrong)
		fmt.Fprintf(w, "  (b) %s %-11s wall: scand no-cache median %.3f s = %s x pyarrow's %.3f s (<= 0.5); scand with its cache %.3f s = %s x%s\n",
			verdict(rowsOK && med.Seconds() <= 0.5*pa.Seconds()), q.Name+":", med.Seconds(), ratio(med, pa), pa.Seconds(), warm.Seconds(), ratio(warm, pa), wrong)
		if rowsOK && med.Seconds() > 0.5*pa.Seconds() {
			miss = append(miss, missed{q, true, "(b) wall", med.Seconds() / pa.Seconds()})
		}
	}
	return miss
}

// targetC: 100 % filters against no filter, scand (with its cache).
func targetC(w io.Writer, res *results) (miss []missed) {
	none := ok(res.timed(res.m.query("none"), "scand"))
	base := median(none)
	for _, q := range res.m.Queries {
		if q.Target < 100 || q.SQL == "" {
			continue
		}
		runs := ok(res.timed(q, "scand"))
		if len(runs) == 0 || base == 0 {
			fmt.Fprintf(w, "  (c) MISS %-11s not measured\n", q.Name+":")
			continue
		}
		med := median(runs)
		wrong, rowsOK := "", !wrongRows(res, q, "scand")
		if !rowsOK {
			wrong = "; WRONG ROWS"
		}
		fmt.Fprintf(w, "  (c) %s %-11s scand median %.3f s with the filter (%d runs) = %s x %.3f s without (%d runs) (<= 1.05)%s\n",
			verdict(rowsOK && med.Seconds() <= 1.05*base.Seconds()), q.Name+":", med.Seconds(), len(runs), ratio(med, base), base.Seconds(), len(none), wrong)
		if rowsOK && med.Seconds() > 1.05*base.Seconds() {
			miss = append(miss, missed{q, false, "(c)", med.Seconds() / base.Seconds()})
		}
	}
	return miss
}

func dash(n int) string { return strings.Repeat("-", n) }

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
