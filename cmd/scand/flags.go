package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// newFlagSet returns a flag set for command name that reports errors
// instead of exiting, and prints its usage line before the flags.
func newFlagSet(name, synopsis string, e env) *flag.FlagSet {
	fs := flag.NewFlagSet("scand "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: scand %s %s\n\nFlags (also SCAND_<FLAG> in the environment):\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// groupedUsage is newFlagSet's usage with the flags in group listed
// apart, under title, after the others.
func groupedUsage(fs *flag.FlagSet, name, synopsis string, e env, group map[string]bool, title string) func() {
	return func() {
		fmt.Fprintf(e.stderr, "Usage: scand %s %s\n\nFlags (also SCAND_<FLAG> in the environment):\n", name, synopsis)
		printFlags(fs, func(f *flag.Flag) bool { return !group[f.Name] })
		fmt.Fprintf(e.stderr, "\n%s:\n", title)
		printFlags(fs, func(f *flag.Flag) bool { return group[f.Name] })
	}
}

// printFlags prints the flags that keep accepts as flag.PrintDefaults
// does.
func printFlags(fs *flag.FlagSet, keep func(*flag.Flag) bool) {
	sub := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	sub.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		if keep(f) {
			sub.Var(f.Value, f.Name, f.Usage)
			sub.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	sub.PrintDefaults()
}

// typedFlag is a flag.Value for a setting with a parser and a name
// (wire.SendPath, wire.Compression, local.ReadMode): the flag is validated
// once, where it is parsed.
func typedFlag[T fmt.Stringer](v *T, parse func(string) (T, error)) flag.Value {
	return &typed[T]{v: v, parse: parse}
}

type typed[T fmt.Stringer] struct {
	v     *T
	parse func(string) (T, error)
}

func (t *typed[T]) String() string {
	if t == nil || t.v == nil {
		return ""
	}
	return (*t.v).String()
}

func (t *typed[T]) Set(s string) error {
	v, err := t.parse(s)
	if err != nil {
		return err
	}
	*t.v = v
	return nil
}

// envName is the environment variable of a flag: SCAND_ and the flag's
// name upper-cased, dashes as underscores.
func envName(flagName string) string {
	return "SCAND_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parse sets fs's flags from the environment, then from args, and returns
// the positional arguments. Flags may come after positional arguments
// ("scand scan a.parquet --limit 5"), which the flag package alone does
// not allow; "--" ends the flags.
//
// The environment is applied first so that the command line overrides it.
func parse(fs *flag.FlagSet, args []string, e env) ([]string, error) {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		v, ok := e.getenv(envName(f.Name))
		if !ok || envErr != nil {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			envErr = fmt.Errorf("invalid value %q for %s: %v", v, envName(f.Name), err)
		}
	})
	if envErr != nil {
		fmt.Fprintf(e.stderr, "scand: %v\n", envErr)
		return nil, errUsage
	}
	var pos []string
	for {
		if err := parseQuiet(fs, args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.Usage()
				return nil, err
			}
			return nil, usageErr(fs, "%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseQuiet is fs.Parse without its printing: the flag package prints
// the error and the whole usage on every mistake, which buries the one
// line that says what was wrong; parse prints instead.
func parseQuiet(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	defer func() { fs.SetOutput(out); fs.Usage = usage }()
	return fs.Parse(args)
}

// usageErr prints a usage problem on one line and where the command's
// usage is, and returns errUsage. The full usage is long (serve has
// forty flags) and would scroll the problem out of sight.
func usageErr(fs *flag.FlagSet, format string, args ...any) error {
	fmt.Fprintf(fs.Output(), "%s: %s\nsee %s --help\n", fs.Name(), fmt.Sprintf(format, args...), fs.Name())
	return errUsage
}

// listenAddr is a listen flag's value as net.Listen takes it: without a
// grpc:// scheme, and a bare port ("31820", what people type) on loopback,
// 127.0.0.1:31820, as the default is: listening on every interface stays
// something asked for (":31820" or "0.0.0.0:31820"), which serve checks
// for TLS and authentication.
func listenAddr(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "grpc://"), "grpc+tcp://")
	if _, err := strconv.ParseUint(s, 10, 16); err == nil {
		return "127.0.0.1:" + s
	}
	return s
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// byteSize is a flag.Value for byte counts: a plain number of bytes, or a
// number with a unit. KiB/MiB/GiB/TiB (or Ki/Mi/Gi/Ti, or K/M/G/T) are
// powers of 1024; KB/MB/GB/TB are powers of 1000. Units are case
// insensitive and may follow a space: "64MiB", "1.5 GiB", "500kb".
type byteSize int64

func (b *byteSize) String() string { return byteSizeString(int64(*b)) }

// byteSizeString writes n in the largest binary unit that divides it.
func byteSizeString(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("negative size %q", s)
	}
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	}
	mult, ok := map[string]float64{
		"": 1, "b": 1,
		"k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10, "kb": 1e3,
		"m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20, "mb": 1e6,
		"g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30, "gb": 1e9,
		"t": 1 << 40, "ti": 1 << 40, "tib": 1 << 40, "tb": 1e12,
	}[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)", s[i:])
	}
	if unit == "" || unit == "b" {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("not a byte count: %q", s)
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("not a size: %q", s)
	}
	v := f * mult
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(v), nil
}
