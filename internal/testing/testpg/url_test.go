package testpg

import (
	"strings"
	"testing"
)

func TestParseAdminAndWithDatabase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw, admin, db string
	}{
		{
			raw:   "postgres://postgres@127.0.0.1:5432?sslmode=disable",
			admin: "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
			db:    "postgres://postgres@127.0.0.1:5432/teammem_test_x?sslmode=disable",
		},
		{
			raw:   "postgresql://u:p%40ss@db.example/",
			admin: "postgresql://u:p%40ss@db.example/postgres",
			db:    "postgresql://u:p%40ss@db.example/teammem_test_x",
		},
		{
			raw:   "postgres://u@h:6543/app?sslmode=require&application_name=t",
			admin: "postgres://u@h:6543/app?sslmode=require&application_name=t",
			db:    "postgres://u@h:6543/teammem_test_x?sslmode=require&application_name=t",
		},
		{
			raw:   "postgres:///postgres?host=/run/postgresql",
			admin: "postgres:///postgres?host=/run/postgresql",
			db:    "postgres:///teammem_test_x?host=/run/postgresql",
		},
	}
	for _, tt := range tests {
		u, err := parseAdmin(tt.raw)
		if err != nil {
			t.Errorf("parseAdmin(%q): %v", tt.raw, err)
			continue
		}
		if got := u.String(); got != tt.admin {
			t.Errorf("parseAdmin(%q) = %q, want %q", tt.raw, got, tt.admin)
		}
		if got := withDatabase(u, "teammem_test_x").String(); got != tt.db {
			t.Errorf("withDatabase(%q) = %q, want %q", tt.raw, got, tt.db)
		}
	}
}

func TestParseAdminRejectsOtherForms(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"host=127.0.0.1 user=postgres password=hunter2",
		"mysql://root:hunter2@127.0.0.1/test",
		"postgres://root:hunter2@127.0.0.1:port/",
	} {
		_, err := parseAdmin(raw)
		if err == nil {
			t.Errorf("parseAdmin(%q) succeeded, want an error", raw)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parseAdmin(%q) error %q leaks the password", raw, err)
		}
	}
}
