package httpapi

import (
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

func TestStreamCounter(t *testing.T) {
	c := streamCounter{open: map[string]int{}}
	var rel []func()
	for range 2 {
		r, err := c.acquire("k", 2)
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, r)
	}
	if _, err := c.acquire("k", 2); teammem.ErrorCode(err) != teammem.ERateLimited {
		t.Fatalf("third stream of a key capped at 2: %v", err)
	}
	if _, err := c.acquire("other", 2); err != nil {
		t.Fatalf("another key: %v", err)
	}
	rel[0]()
	rel[0]() // releasing twice frees one slot only
	if _, err := c.acquire("k", 2); err != nil {
		t.Fatalf("after one stream ended: %v", err)
	}
	if _, err := c.acquire("k", 2); err == nil {
		t.Fatal("a double release freed two slots")
	}
}
