// Package configs holds the default configuration files, embedded so the
// binary works without the repository.
package configs

import _ "embed"

// Scenarios is the default TicToc scenario catalog (scenarios.yaml), read by
// splits.DefaultCatalog.
//
//go:embed scenarios.yaml
var Scenarios []byte
