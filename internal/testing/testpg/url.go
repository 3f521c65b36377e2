package testpg

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// defaultDatabase is the database an admin URL connects to when it names none: the one every
// cluster has, rather than libpq's default of the user's name.
const defaultDatabase = "postgres"

// parseAdmin checks that raw is a postgres:// or postgresql:// URL and names defaultDatabase
// in it when it names no database. Errors never repeat raw, which may hold a password.
func parseAdmin(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		// A keyword/value DSN ("host=... dbname=...") parses as a scheme-less path.
		return nil, errors.New(`want a postgres:// URL (testpg replaces its path with the test database's name), not a keyword/value string or another scheme`)
	}
	if strings.Trim(u.Path, "/") == "" {
		return withDatabase(u, defaultDatabase), nil
	}
	return u, nil
}

// withDatabase returns a copy of u whose path names the database name, keeping the user,
// host and query parameters such as sslmode.
func withDatabase(u *url.URL, name string) *url.URL {
	c := *u
	c.Path = "/" + name
	c.RawPath = ""
	return &c
}
