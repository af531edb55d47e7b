package rangecache

import "runtime"

func (c *Cache) flightsLen() int {
	c.flightsMu.Lock()
	defer c.flightsMu.Unlock()
	return len(c.flights)
}

func runtimeGosched() { runtime.Gosched() }
