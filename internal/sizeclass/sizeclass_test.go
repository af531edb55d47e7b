package sizeclass

import (
	"testing"
)

func TestClass(t *testing.T) {
	eighths := New(64<<10, 64<<20, 8)
	pow2 := New(4<<10, 64<<20, 1)
	for _, tc := range []struct {
		name        string
		c           Classes
		n           int
		size, index int
		ok          bool
	}{
		{"eighths below min", eighths, 64<<10 - 1, 0, -1, false},
		{"eighths min", eighths, 64 << 10, 64 << 10, 0, true},
		{"eighths min+1", eighths, 64<<10 + 1, 72 << 10, 1, true},
		{"eighths 100 KiB", eighths, 100 << 10, 104 << 10, 5, true},
		{"eighths just under a power", eighths, 128<<10 - 1, 128 << 10, 8, true},
		{"eighths a power", eighths, 128 << 10, 128 << 10, 8, true},
		{"eighths 16 MiB", eighths, 16 << 20, 16 << 20, 64, true},
		{"eighths max", eighths, 64 << 20, 64 << 20, 80, true},
		{"eighths above max", eighths, 64<<20 + 1, 0, -1, false},
		{"pow2 zero", pow2, 0, 0, -1, false},
		{"pow2 min", pow2, 4 << 10, 4 << 10, 0, true},
		{"pow2 min+1", pow2, 4<<10 + 1, 8 << 10, 1, true},
		{"pow2 1 MiB+100", pow2, 1<<20 + 100, 2 << 20, 9, true},
		{"pow2 max", pow2, 64 << 20, 64 << 20, 14, true},
		{"zero value", Classes{}, 1 << 20, 0, -1, false},
	} {
		size, index, ok := tc.c.Class(tc.n)
		if size != tc.size || index != tc.index || ok != tc.ok {
			t.Errorf("%s: Class(%d) = %d, %d, %v; want %d, %d, %v", tc.name, tc.n, size, index, ok, tc.size, tc.index, tc.ok)
		}
	}
	if eighths.Len() != 81 || pow2.Len() != 15 || (Classes{}).Len() != 0 {
		t.Errorf("Len: %d, %d, %d", eighths.Len(), pow2.Len(), Classes{}.Len())
	}
}

// Every length maps to a class that fits it with less than 1/perDoubling
// waste, indexes run without holes, and Exact accepts exactly the class
// sizes.
func TestClassBounds(t *testing.T) {
	for _, c := range []Classes{New(64<<10, 64<<20, 8), New(4<<10, 64<<20, 1), New(16, 1024, 4), New(1, 1, 1)} {
		last := -1
		per := c.per
		for n := c.Min(); n <= c.Max(); n += max(1, c.Min()/per/2-1) {
			size, i, ok := c.Class(n)
			if !ok || size < n || (size-n)*per >= n || i < last || i > last+1 || i >= c.Len() {
				t.Fatalf("%+v: Class(%d) = %d, class %d, %v (previous class %d)", c, n, size, i, ok, last)
			}
			if j, exact := c.Exact(size); !exact || j != i {
				t.Fatalf("%+v: Exact(%d) = %d, %v; want %d", c, size, j, exact, i)
			}
			if size != n {
				if _, exact := c.Exact(n); exact {
					t.Fatalf("%+v: Exact(%d) accepts a size that rounds up to %d", c, n, size)
				}
			}
			last = i
		}
		if size, i, _ := c.Class(c.Max()); size != c.Max() || i != c.Len()-1 {
			t.Errorf("%+v: Max is class %d of size %d, want the last (%d)", c, i, size, c.Len()-1)
		}
	}
}

func TestNewPanics(t *testing.T) {
	for _, args := range [][3]int{{0, 8, 1}, {3, 8, 1}, {16, 8, 1}, {4, 8, 8}, {4, 8, 3}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New%v did not panic", args)
				}
			}()
			New(args[0], args[1], args[2])
		}()
	}
}

func FuzzClass(f *testing.F) {
	f.Add(100<<10, uint8(3))
	f.Fuzz(func(t *testing.T, n int, step uint8) {
		c := New(1<<10, 1<<30, 1<<(step%8))
		size, i, ok := c.Class(n)
		if ok != (n >= c.Min() && n <= c.Max()) {
			t.Fatalf("Class(%d) ok = %v", n, ok)
		}
		if !ok {
			return
		}
		if size < n || size > c.Max() || i < 0 || i >= c.Len() {
			t.Fatalf("Class(%d) = %d, %d", n, size, i)
		}
		if j, exact := c.Exact(size); !exact || j != i {
			t.Fatalf("Exact(Class(%d) = %d) = %d, %v; want %d", n, size, j, exact, i)
		}
	})
}
