package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The transport floor: what sending the bytes costs without Flight.
//
// The "int64" data set (16 uncompressed int64 columns, -floor-mb MB of
// Arrow data) is scanned by the stock and zero-copy servers into stock
// clients (arrow-go's Flight client with gRPC's defaults, and
// pyarrow.flight), and the same number of bytes is sent by a bare
// loopback TCP sender to a reader that drops them, the configurations
// taking turns scan by scan. The bare sender writes message-sized pieces
// (bareWrite, the size of the servers' Flight messages) cut from a ring of
// random bytes larger than the CPU caches (bareRing), so that, like the
// servers, it reads its bytes from memory; it costs the kernel's copy
// into the socket and loopback TCP, nothing else. "x floor" is a row's
// server CPU per GB over the bare sender's.

const (
	bareRing  = 64 << 20
	bareWrite = 2 << 20
)

// floorConfig is a row of the floor table.
type floorConfig struct {
	label  string // what the row's server is
	path   string // the child's -send-path: stock, zerocopy or bare
	client string // stock (arrow-go), pyarrow, or bare
	extra  []string
}

func runFloor(dir string, reps int, py *pyClient, variants string) {
	const ds = "int64"
	clients := []string{"stock"}
	if py != nil {
		clients = append(clients, "pyarrow")
	}
	var configs []floorConfig
	for _, cl := range clients {
		configs = append(configs, floorConfig{"stock", "stock", cl, nil}, floorConfig{"zerocopy", "zerocopy", cl, nil})
		configs = append(configs, floorVariants(variants, cl)...)
	}
	configs = append(configs, floorConfig{"bare", "bare", "bare", nil})

	// The decode alone, as in the main table.
	srv, err := startChild(dir, "stock", "", "pread")
	if err != nil {
		log.Fatal(err)
	}
	srv.command("decode " + ds + ".parquet")
	cpu0, _ := srv.stats()
	for range reps {
		srv.command("decode " + ds + ".parquet")
	}
	cpu1, _ := srv.stats()
	srv.close()
	decode := (cpu1 - cpu0) / time.Duration(reps)

	srvs := make([]*child, len(configs))
	for i, c := range configs {
		if srvs[i], err = startChild(dir, c.path, "", "pread", c.extra...); err != nil {
			log.Fatal(err)
		}
	}
	type tally struct {
		cl        scanClient
		cpu, wall time.Duration
		alloc     uint64
	}
	tallies := make([]tally, len(configs))
	var scanBytes int64 // Arrow IPC bytes of one scan, from the stock Go client's warm-up
	for i, c := range configs {
		var cl scanClient
		switch c.client {
		case "pyarrow":
			cl = py.on(srvs[i].addr)
		case "bare":
			cl, err = newBareClient(srvs[i].addr, scanBytes)
		default:
			cl, err = newBenchClient(srvs[i].addr, false)
		}
		if err != nil {
			log.Fatal(err)
		}
		n, err := cl.scan(ds) // warm up
		if err != nil {
			log.Fatal(err)
		}
		if scanBytes == 0 {
			scanBytes = n
		}
		tallies[i].cl = cl
	}
	for rep := range reps {
		for k := range configs {
			i := (k + rep) % len(configs)
			t := &tallies[i]
			cpu0, alloc0 := srvs[i].stats()
			start := time.Now()
			if _, err := t.cl.scan(ds); err != nil {
				log.Fatal(err)
			}
			t.wall += time.Since(start)
			cpu1, alloc1 := srvs[i].stats()
			t.cpu += cpu1 - cpu0
			t.alloc += alloc1 - alloc0
		}
	}
	for i := range configs {
		tallies[i].cl.close()
		srvs[i].close()
	}

	gb := float64(scanBytes) * float64(reps) / 1e9
	decodeGB := decode.Seconds() / (float64(scanBytes) / 1e9)
	perGB := func(t tally) float64 { return t.cpu.Seconds() / gb }
	floor := perGB(tallies[len(configs)-1])
	stock := map[string]float64{}
	for i, c := range configs {
		if c.label == "stock" {
			stock[c.client] = perGB(tallies[i])
		}
	}
	fmt.Printf("\ntransport floor: %s, 16 uncompressed int64 columns, %.0f MB of Arrow IPC per scan, %d scans per row\n", ds, float64(scanBytes)/1e6, reps)
	fmt.Printf("bare: a loopback TCP sender of the same bytes, %d MiB writes from a %d MiB ring, to a reader that drops them\n", bareWrite>>20, bareRing>>20)
	fmt.Printf("decode alone (pread and the native reader, no send): %.3f s CPU per scan, %.3f s/GB; send = srv - decode\n\n", decode.Seconds(), decodeGB)
	fmt.Printf("%-16s %-8s | %8s %7s %8s | %9s %7s | %9s | %6s\n", "send", "client", "srv s/GB", "x floor", "vs stock", "send s/GB", "x floor", "alloc B/B", "MB/s")
	for i, c := range configs {
		t := tallies[i]
		vs, send, sendX := "       -", "        -", "      -"
		if s, ok := stock[c.client]; ok {
			vs = fmt.Sprintf("%7.2fx", perGB(t)/s)
		}
		if c.path != "bare" {
			send = fmt.Sprintf("%9.3f", perGB(t)-decodeGB)
			sendX = fmt.Sprintf("%6.2fx", (perGB(t)-decodeGB)/floor)
		}
		fmt.Printf("%-16s %-8s | %8.3f %6.2fx %8s | %9s %7s | %9.3f | %6.0f\n", c.label, c.client, perGB(t), perGB(t)/floor, vs,
			send, sendX, float64(t.alloc)/(gb*1e9), gb*1e3/t.wall.Seconds())
	}
}

// floorVariants are the zero-copy rows of -floor-variants for client:
// comma-separated gRPC write buffer sizes in KiB, each optionally
// +unshared.
func floorVariants(variants, client string) []floorConfig {
	var configs []floorConfig
	for _, v := range strings.Split(variants, ",") {
		if v == "" {
			continue
		}
		kib, unshared := strings.CutSuffix(v, "+unshared")
		n, err := strconv.Atoi(kib)
		if err != nil {
			log.Fatalf("-floor-variants: %q: %v", v, err)
		}
		extra := []string{"-write-buffer", strconv.Itoa(n << 10)}
		if unshared {
			extra = append(extra, "-unshared-write-buffer")
		}
		configs = append(configs, floorConfig{"zc-wb" + v, "zerocopy", client, extra})
	}
	return configs
}

// runBareChild is the bare sender: for each 8-byte big-endian count a
// client sends, it writes that many bytes back, bareWrite at a time,
// cut from a ring of random bytes. It answers the parent's commands like
// the server child.
func runBareChild() {
	ring := make([]byte, bareRing)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < len(ring); i += 8 {
		binary.LittleEndian.PutUint64(ring[i:], rng.Uint64())
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			go bareServe(conn, ring)
		}
	}()
	fmt.Println(lis.Addr().String())
	childCommands(func(string, string) bool { return false })
	lis.Close()
}

func bareServe(conn net.Conn, ring []byte) {
	defer conn.Close()
	var req [8]byte
	off := 0
	for {
		if _, err := io.ReadFull(conn, req[:]); err != nil {
			return
		}
		for n := int64(binary.BigEndian.Uint64(req[:])); n > 0; {
			w := int(min(n, bareWrite))
			if off+w > len(ring) {
				off = 0
			}
			if _, err := conn.Write(ring[off : off+w]); err != nil {
				return
			}
			off += w
			n -= int64(w)
		}
	}
}

// bareClient asks the bare sender for n bytes per scan and drops them.
type bareClient struct {
	conn net.Conn
	n    int64
	buf  []byte
}

func newBareClient(addr string, n int64) (*bareClient, error) {
	if n <= 0 {
		return nil, fmt.Errorf("bare client: no scan size (the stock rows come first)")
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &bareClient{conn: conn, n: n, buf: make([]byte, 1<<20)}, nil
}

func (c *bareClient) scan(string) (int64, error) {
	var req [8]byte
	binary.BigEndian.PutUint64(req[:], uint64(c.n))
	if _, err := c.conn.Write(req[:]); err != nil {
		return 0, err
	}
	for left := c.n; left > 0; {
		k, err := c.conn.Read(c.buf[:min(left, int64(len(c.buf)))])
		left -= int64(k)
		if err != nil {
			return c.n - left, err
		}
	}
	return c.n, nil
}

func (c *bareClient) wireBytes() int64 { return 0 }
func (c *bareClient) resetWire()       {}
func (c *bareClient) close()           { c.conn.Close() }

// fileSize is the size of dir/ds.parquet: the bytes the bare sender sends
// per scan when profiled alone (uncompressed int64 columns: about the
// Arrow bytes).
func fileSize(dir, ds string) int64 {
	fi, err := os.Stat(filepath.Join(dir, ds+".parquet"))
	if err != nil {
		log.Fatal(err)
	}
	return fi.Size()
}
