package httpapi

import (
	"testing"
	"time"
)

func TestAuditDedup(t *testing.T) {
	d := newAuditDedup()
	now := time.Unix(1000, 0)
	read := auditedRead{key: "k", action: "space.export", repo: "acme/w", target: "team"}
	if !d.first(read, now) || d.first(read, now.Add(time.Minute)) || d.first(read, now.Add(59*time.Minute)) {
		t.Fatal("a read audited twice within the hour")
	}
	other := read
	other.key = "k2"
	if !d.first(other, now) {
		t.Fatal("another key's read was deduplicated")
	}
	if !d.first(read, now.Add(time.Hour)) {
		t.Fatal("a read an hour later was not audited")
	}
}
