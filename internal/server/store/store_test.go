package store

import "testing"

func TestParse(t *testing.T) {
	for dsn, want := range map[string]string{
		"sqlite://./data/teammem.db":    "sqlite ./data/teammem.db",
		"sqlite:///abs/path.db":         "sqlite /abs/path.db",
		"data.db":                       "sqlite data.db",
		"postgres://u:p@h/db":           "postgres postgres://u:p@h/db",
		"postgresql://h/db?sslmode=off": "postgres postgresql://h/db?sslmode=off",
	} {
		d, tgt, err := Parse(dsn)
		if err != nil || d+" "+tgt != want {
			t.Errorf("Parse(%q) = %s %s %v, want %s", dsn, d, tgt, err, want)
		}
	}
	for _, bad := range []string{"", "mysql://x", "sqlite://", "sqlite://a.db?mode=ro"} {
		if _, _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	if got := Redact("postgres://u:secret@h/db"); got != "postgres://u:***@h/db" {
		t.Errorf("Redact = %s", got)
	}
}
