package filter

import "testing"

func TestRelax(t *testing.T) {
	col := func(n string) *Column { return &Column{Path: []string{n}} }
	lit := func(v any) *Literal { return &Literal{Value: v} }
	eq := func(c string, v any) Expr { return &Compare{Op: Eq, Left: col(c), Right: lit(v)} }
	day := func(c string) bool { return c == "day" }
	tests := []struct {
		name string
		in   Expr
		want string // "" for nil
	}{
		{"partition only", eq("day", Number("3")), `(day = 3)`},
		{"other only", eq("x", Number("1")), ""},
		{"and keeps partition", &And{Terms: []Expr{eq("day", Number("3")), eq("x", Number("1"))}}, `(day = 3)`},
		{"or with other is true", &Or{Terms: []Expr{eq("day", Number("3")), eq("x", Number("1"))}}, ""},
		{"not pushed down", &Not{Term: &And{Terms: []Expr{eq("day", Number("3")), eq("day", Number("4"))}}},
			`((NOT (day = 3)) OR (NOT (day = 4)))`},
		{"not of or with other", &Not{Term: &Or{Terms: []Expr{eq("day", Number("3")), eq("x", Number("1"))}}},
			`(NOT (day = 3))`},
		{"double not", &Not{Term: &Not{Term: eq("day", Number("3"))}}, `(day = 3)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Relax(tt.in, day)
			s := ""
			if got != nil {
				s = got.String()
			}
			if s != tt.want {
				t.Errorf("Relax(%s) = %s, want %s", tt.in, s, tt.want)
			}
		})
	}
}
