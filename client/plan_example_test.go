package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/scand/scand/client"
	scandv1 "github.com/scand/scand/proto/scand/v1"
)

// ExampleClient_Explain shows what a scan would read without reading it:
// the files, the endpoints (splits) with their row groups, and the rows.
// Plan.String renders all of it, with byte counts and the schema.
func ExampleClient_Explain() {
	ctx := context.Background()
	addr, stop := serveFruit()
	defer stop()

	c, err := client.Dial(ctx, "grpc://"+addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	plan, err := c.Explain(ctx, &scandv1.ScanRequest{
		Paths:   []string{"*.parquet"},
		Columns: []string{"name", "qty"},
		Limit:   2,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rows:", plan.TotalRecords)
	for _, f := range plan.Files {
		fmt.Printf("file %s (%s): %d endpoint, %d rows\n", f.Path, f.Format, f.Endpoints, f.Rows)
	}
	for _, e := range plan.Endpoints {
		fmt.Printf("endpoint %s row groups %v: %d of %d rows\n", e.Path, e.RowGroups, e.Returns(), e.Rows)
	}
	low, high := plan.EstimatedReads()
	fmt.Printf("estimated reads: %d to %d\n", low, high)
	// Output:
	// rows: 2
	// file fruit.parquet (parquet): 1 endpoint, 2 rows
	// endpoint fruit.parquet row groups [0]: 2 of 3 rows
	// estimated reads: 1 to 2
}
