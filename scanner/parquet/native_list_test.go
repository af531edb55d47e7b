package parquet

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rowStartsNaive is rowStarts one level at a time: the reference.
func rowStartsNaive(reps []int16, k int) (int, int) {
	starts := 0
	for i, r := range reps {
		if r == 0 {
			starts++
			if starts == k {
				return i, k
			}
		}
	}
	return len(reps), starts
}

// rowStarts agrees with the one-level-at-a-time loop for every k, on
// levels with rows of every length around the 8-level blocks.
func TestRowStartsMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, rowLen := range []int{1, 2, 7, 8, 9, 30} {
		for _, n := range []int{0, 1, 7, 8, 9, 17, 64, 1000} {
			reps := make([]int16, n)
			for i := range reps {
				if r.IntN(rowLen) != 0 {
					reps[i] = int16(1 + r.IntN(2))
				}
			}
			for k := 1; k <= n+2; k++ {
				gi, gs := rowStarts(reps, k)
				wi, ws := rowStartsNaive(reps, k)
				if gi != wi || gs != ws {
					t.Fatalf("row length %d, %d levels, k=%d: (%d, %d), want (%d, %d)", rowLen, n, k, gi, gs, wi, ws)
				}
			}
		}
	}
}

// FuzzRowStarts: rowStarts equals the reference on any levels.
func FuzzRowStarts(f *testing.F) {
	f.Add([]byte{0, 1, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}, uint16(3))
	f.Fuzz(func(t *testing.T, b []byte, k uint16) {
		reps := make([]int16, len(b))
		for i, v := range b {
			reps[i] = int16(v % 3)
		}
		kk := int(k)%(len(reps)+2) + 1
		gi, gs := rowStarts(reps, kk)
		wi, ws := rowStartsNaive(reps, kk)
		if gi != wi || gs != ws {
			t.Fatalf("k=%d: (%d, %d), want (%d, %d)", kk, gi, gs, wi, ws)
		}
	})
}

// BenchmarkRowStarts finds the row starts of a 64 Ki-level page of lists
// of mean length rowLen, a batch of rows at a time, as gatherLevels does.
//
//	go test ./scanner/parquet -run XXX -bench RowStarts -count 6
func BenchmarkRowStarts(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, rowLen := range []int{2, 5, 30} {
		reps := make([]int16, 64<<10)
		for i := range reps {
			if r.IntN(rowLen) != 0 {
				reps[i] = 1
			}
		}
		for _, impl := range []struct {
			name string
			fn   func([]int16, int) (int, int)
		}{{"single-pass", rowStarts}, {"per-level", rowStartsNaive}} {
			b.Run(fmt.Sprintf("rowLen=%d/%s", rowLen, impl.name), func(b *testing.B) {
				b.SetBytes(int64(2 * len(reps)))
				for b.Loop() {
					for at := 0; at < len(reps); {
						i, _ := impl.fn(reps[at:], 1025)
						at += i + 1
					}
				}
			})
		}
	}
}

// listOffsetsNaive is listOffsets a level at a time with a branch per
// case, as file.DefRepLevelsToListInfo reads: the reference.
func listOffsetsNaive(node *nestedField, defs, reps []int16, offs []int32, valid []byte) (nulls int, err error) {
	n := len(offs) - 1
	slot := 0
	offs[0] = 0
	for i, d := range defs {
		r := reps[i]
		if d < node.ancDef || r > node.rep {
			continue
		}
		if r == node.rep {
			if slot == 0 {
				return 0, corrupt("list element before its list")
			}
			offs[slot]++
			continue
		}
		if slot == n {
			return 0, corrupt("more lists in the batch's levels than its %d slots", n)
		}
		slot++
		offs[slot] = offs[slot-1]
		if d >= node.def {
			offs[slot]++
		}
		if valid != nil && d < node.def-1 {
			bitutil.ClearBit(valid, slot-1)
			nulls++
		}
	}
	if slot != n {
		return 0, corrupt("%d lists in the batch's levels, want %d", slot, n)
	}
	return nulls, nil
}

// checkListOffsets compares listOffsets with the reference for list
// node over the levels and n slots: the same error-ness, and the same
// offsets, validity and nulls when both succeed.
func checkListOffsets(t *testing.T, node *nestedField, defs, reps []int16, n int) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var valid *memory.Buffer
	if node.nullable {
		valid = newValidity(mem, max(n, 1), n)
		defer valid.Release()
	}
	offs := make([]int32, n+1)
	nulls, err := listOffsets(node, defs, reps, offs, valid)
	wantOffs := make([]int32, n+1)
	var wantValid []byte
	if valid != nil {
		wantValid = make([]byte, len(valid.Bytes()))
		bitutil.SetBitsTo(wantValid, 0, int64(n), true)
	}
	wantNulls, wantErr := listOffsetsNaive(node, defs, reps, wantOffs, wantValid)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("node %+v, defs %v reps %v, n %d: error %v, want %v", *node, defs, reps, n, err, wantErr)
	}
	if err != nil {
		return
	}
	if !slices.Equal(offs, wantOffs) || nulls != wantNulls || (valid != nil && !bytes.Equal(valid.Bytes(), wantValid)) {
		t.Fatalf("node %+v, defs %v reps %v: offsets %v nulls %d, want %v nulls %d", *node, defs, reps, offs, nulls, wantOffs, wantNulls)
	}
}

// randomLevels is levels of rows of lists of lists of optional values
// (max repetition 2, max definition 5), drawn at random: valid shapes,
// with corrupt levels mixed in when corrupt.
func randomLevels(r *rand.Rand, rows int, corrupted bool) (defs, reps []int16) {
	for range rows {
		elems := r.IntN(4)
		// An empty or null outer list: one level below an element's.
		if elems == 0 {
			defs, reps = append(defs, int16(r.IntN(2))), append(reps, 0)
			continue
		}
		for e := range elems {
			rep := int16(1)
			if e == 0 {
				rep = 0
			}
			inner := r.IntN(3)
			if inner == 0 {
				defs, reps = append(defs, int16(2+r.IntN(2))), append(reps, rep)
				continue
			}
			for j := range inner {
				if j > 0 {
					rep = 2
				}
				defs, reps = append(defs, int16(4+r.IntN(2))), append(reps, rep)
			}
		}
	}
	if corrupted && len(defs) > 0 {
		for range 1 + r.IntN(3) {
			i := r.IntN(len(defs))
			defs[i], reps[i] = int16(r.IntN(6)), int16(r.IntN(3))
		}
	}
	return defs, reps
}

// TestListOffsetsMatchesNaive: the outer and inner lists of a list of
// lists (nullable or not), and a top-level list, get the offsets,
// validity and errors of the per-level reference, on valid and
// corrupted levels.
func TestListOffsetsMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	outer := func(nullable bool) nestedField {
		return nestedField{list: true, def: 2, rep: 1, ancDef: 0, nullable: nullable}
	}
	inner := func(nullable bool) nestedField {
		return nestedField{list: true, def: 4, rep: 2, ancDef: 2, nullable: nullable}
	}
	for _, rows := range []int{0, 1, 2, 7, 100} {
		for _, corrupted := range []bool{false, true} {
			for range 20 {
				defs, reps := randomLevels(r, rows, corrupted)
				for _, nullable := range []bool{false, true} {
					o := outer(nullable)
					checkListOffsets(t, &o, defs, reps, rows)
					// The inner lists' slots are the outer lists'
					// elements: as many as the levels say, and one off.
					in := inner(nullable)
					slots := 0
					for i, d := range defs {
						if reps[i] <= 1 && d >= 2 {
							slots++
						}
					}
					for _, n := range []int{slots, slots + 1, max(slots-1, 0)} {
						checkListOffsets(t, &in, defs, reps, n)
					}
				}
			}
		}
	}
}

// FuzzListOffsets: any levels of up to repetition 2 and definition 5,
// for any list node among them, give the reference's answer.
func FuzzListOffsets(f *testing.F) {
	f.Add([]byte{0x10, 0x14, 0x24, 0x25, 0x0, 0x12, 0x1}, uint8(0), uint8(4))
	f.Add([]byte{0x24, 0x10}, uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, levels []byte, which, n uint8) {
		defs, reps := make([]int16, len(levels)), make([]int16, len(levels))
		for i, b := range levels {
			defs[i], reps[i] = int16(b&7)%6, int16(b>>4)%3
		}
		nodes := []nestedField{
			{list: true, def: 2, rep: 1, ancDef: 0, nullable: true},
			{list: true, def: 1, rep: 1, ancDef: 0},
			{list: true, def: 4, rep: 2, ancDef: 2, nullable: true},
			{list: true, def: 5, rep: 2, ancDef: 3},
		}
		node := nodes[int(which)%len(nodes)]
		checkListOffsets(t, &node, defs, reps, int(n)%64)
	})
}

// BenchmarkListOffsets turns the levels of 64 Ki rows of a top-level
// nullable list of 0 to 5 elements into offsets, one pass against the
// per-level reference.
//
//	go test ./scanner/parquet -run XXX -bench ListOffsets -count 6
func BenchmarkListOffsets(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	const rows = 64 << 10
	var defs, reps []int16
	for range rows {
		k := r.IntN(6)
		if k == 0 {
			defs, reps = append(defs, int16(r.IntN(2))), append(reps, 0)
			continue
		}
		for e := range k {
			defs, reps = append(defs, 3), append(reps, int16(min(e, 1)))
		}
	}
	node := nestedField{list: true, def: 2, rep: 1, nullable: true}
	offs := make([]int32, rows+1)
	vb := make([]byte, rows/8)
	valid := memory.NewBufferBytes(vb)
	b.Run("single-pass", func(b *testing.B) {
		b.SetBytes(int64(4 * len(defs)))
		cpu0 := cpuTime()
		defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for b.Loop() {
			bitutil.SetBitsTo(vb, 0, rows, true)
			if _, err := listOffsets(&node, defs, reps, offs, valid); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("per-level", func(b *testing.B) {
		b.SetBytes(int64(4 * len(defs)))
		cpu0 := cpuTime()
		defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
		for b.Loop() {
			bitutil.SetBitsTo(vb, 0, rows, true)
			if _, err := listOffsetsNaive(&node, defs, reps, offs, vb); err != nil {
				b.Fatal(err)
			}
		}
	})
}
