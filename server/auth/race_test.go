//go:build race

package auth

// raceEnabled skips the slowest bcrypt comparisons, which the race
// detector makes take seconds each; the plain test run still makes them.
const raceEnabled = true
