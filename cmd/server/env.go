package main

import (
	"fmt"
	"strconv"
	"time"
)

// envReader overlays TEAMMEM_* variables on configuration fields. A variable
// that is unset or empty leaves its field as it is; a malformed one is
// recorded as a message naming it, so that every mistake is reported at
// once instead of one per start.
type envReader struct {
	getenv func(string) string
	errs   []string
}

// str sets dst to the variable's value.
func (e *envReader) str(name string, dst *string) {
	if v := e.getenv(name); v != "" {
		*dst = v
	}
}

// integer sets dst to the variable's value as a decimal integer.
func (e *envReader) integer(name string, dst *int) {
	e.parse(name, "an integer", func(v string) (err error) { *dst, err = strconv.Atoi(v); return err })
}

// number sets dst to the variable's value as a decimal number.
func (e *envReader) number(name string, dst *float64) {
	e.parse(name, "a number", func(v string) (err error) { *dst, err = strconv.ParseFloat(v, 64); return err })
}

// duration sets dst to the variable's value as a Go duration.
func (e *envReader) duration(name string, dst *time.Duration) {
	e.parse(name, "a duration like 720h", func(v string) (err error) { *dst, err = time.ParseDuration(v); return err })
}

// parse hands a set variable's value to set and records "NAME="value" is
// not <want>" when it fails.
func (e *envReader) parse(name, want string, set func(string) error) {
	if v := e.getenv(name); v != "" {
		if err := set(v); err != nil {
			e.fail("%s=%q is not %s", name, v, want)
		}
	}
}

// fail records a malformed value.
func (e *envReader) fail(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}
