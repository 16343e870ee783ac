//go:build !race

package benchmarks

// raceBuild says the tests run with the race detector, which makes a
// decoder some six times slower.
const raceBuild = false
