package httpapi

import (
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

func TestWriteLimiter(t *testing.T) {
	l := newWriteLimiter(2, 3)
	now := time.Unix(1000, 0)
	for i := range 3 {
		if err := l.allow("k", now); err != nil {
			t.Fatalf("write %d inside the burst refused: %v", i, err)
		}
	}
	err := l.allow("k", now)
	if teammem.ErrorCode(err) != teammem.ERateLimited || teammem.ErrorDetails(err)["retry_after_seconds"] != 1 {
		t.Fatalf("over the burst = %v %v", err, teammem.ErrorDetails(err))
	}
	if err := l.allow("other", now); err != nil {
		t.Fatalf("another key shares the bucket: %v", err)
	}
	if err := l.allow("k", now.Add(600*time.Millisecond)); err != nil {
		t.Fatalf("refilled token refused: %v", err)
	}
	if newWriteLimiter(0, 5) != nil || newWriteLimiter(0, 5).allow("k", now) != nil {
		t.Fatal("a zero rate must disable limiting")
	}
}
