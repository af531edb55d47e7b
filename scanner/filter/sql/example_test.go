package sql_test

import (
	"fmt"

	"github.com/scand/scand/scanner/filter/sql"
)

func ExampleParse() {
	e, err := sql.Parse(`fare BETWEEN 10 AND 20 AND NOT "pickup zone" IN ('JFK', 'LGA') OR is_refund`)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e)

	_, err = sql.Parse("fare > 10 AND x =")
	fmt.Println(err)
	// Output:
	// ((((fare >= 10) AND (fare <= 20)) AND (NOT ("pickup zone" IN ('JFK', 'LGA')))) OR is_refund)
	// filter: at position 17: expected a value after "=", found end of input
}
