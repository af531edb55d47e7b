# Thin wrappers around the project's scripts.
.PHONY: demo test bench

demo:
	go run ./cmd/scand demo

test:
	bash scripts/test.sh

bench:
	bash scripts/bench.sh
