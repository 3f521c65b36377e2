// Package api holds teammem's HTTP API description, api/openapi.yaml
// (OpenAPI 3.1), embedded so tests and tools can read it from the binary.
package api

import _ "embed"

// OpenAPI is the content of openapi.yaml: every route the server answers,
// its parameters, statuses and bodies. internal/server/httpapi tests that the
// router serves exactly these routes and that real responses match.
//
//go:embed openapi.yaml
var OpenAPI []byte
