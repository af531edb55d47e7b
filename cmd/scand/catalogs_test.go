package main

import (
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"

	"github.com/scand/scand/source/iceberg/catalogs"
)

func TestServeCatalogFlags(t *testing.T) {
	e, _, _ := testEnv(nil)
	f, err := parseServe([]string{"--catalog", "lake=sql+sqlite:///srv/catalog.db", "--catalog", "rest=rest+https://cat.example.com"}, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.catalogs) != 2 || f.catalogs[0].Name != "lake" || f.catalogs[0].Driver != "sqlite" || f.catalogs[1].Endpoint != "https://cat.example.com" {
		t.Errorf("catalogs = %+v", f.catalogs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--catalog", "lake=sql+sqlite:///a.db", "--catalog", "lake=sql+sqlite:///b.db"}, "given twice"},
		{[]string{"--catalog", "lake=ftp://h"}, "no catalog URI"},
		{[]string{"--catalog", "lake=rest+https://u:pw@h"}, "SCAND_CATALOG_LAKE_PASSWORD"},
	} {
		e, _, stderr := testEnv(nil)
		if _, err := parseServe(c.args, e); err == nil || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("parseServe(%q) = %v (%s), want a usage error saying %q", c.args, err, stderr.String(), c.want)
		}
	}
	cats, err := openCatalogs(f.catalogs, func(string) string { return "" })
	if err != nil || len(cats) != 2 {
		t.Fatalf("openCatalogs = %v, %v", cats, err)
	}
	defer catalogs.Close(cats)
	if name, _, ok := cats.Lookup("lake.db.events"); !ok || name != "lake" {
		t.Errorf("Lookup(lake.db.events) = %q, %v", name, ok)
	}
	for _, path := range []string{"lake/db/events", "warehouse.db.events", "s3://lake.db/t"} {
		if _, _, ok := cats.Lookup(path); ok {
			t.Errorf("Lookup(%q) took a path for a catalog table", path)
		}
	}
}

func TestPrintFilesTables(t *testing.T) {
	var b strings.Builder
	err := printFiles(&b, []*flight.FlightInfo{
		{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorPATH, Path: []string{"a.parquet"}}, TotalBytes: 2048},
		{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"table":"lake.db.t"}`)}, TotalBytes: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "2.0 KiB  a.parquet\n  table  lake.db.t\n"; b.String() != want {
		t.Errorf("printFiles:\n%s\nwant\n%s", b.String(), want)
	}
}
