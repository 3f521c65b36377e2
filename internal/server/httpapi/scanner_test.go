package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// TestScannerAsync: while the rules compile the server is not ready and
// scans wait; a failed build refuses every entry instead of storing it
// unscanned.
func TestScannerAsync(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	release := make(chan struct{})
	sc := secretscan.NewOrgScannerAsync(func() (*secretscan.Scanner, error) {
		<-release
		return secretscan.New()
	})
	srv := httptest.NewServer(New(st, sc, Config{}, nil, nil).Handler())
	defer srv.Close()
	readyz := func() int {
		t.Helper()
		res, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := readyz(); got != http.StatusServiceUnavailable {
		t.Fatalf("/readyz while the rules compile = %d, want 503", got)
	}
	token := "ghp_" + "R7kq2Lw9Xz4Nv8Tb3Hs6Jd1Mf5Pc0Ya2Ue7G"
	done := make(chan []teammem.SkippedSecret, 1)
	go func() { done <- sc.ScanEntry(teammem.Org{}, "a.md", "token: "+token+"\n") }()
	select {
	case found := <-done:
		t.Fatalf("a scan finished before the rules were built: %v", found)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if found := <-done; len(found) != 1 || found[0].RuleID != "github-pat" {
		t.Fatalf("scan after the build = %v, want one github-pat", found)
	}
	if err := sc.Wait(); err != nil || readyz() != http.StatusOK {
		t.Fatalf("after the build: Wait = %v, /readyz = %d", err, readyz())
	}

	broken := secretscan.NewOrgScannerAsync(func() (*secretscan.Scanner, error) { return nil, errors.New("no rules") })
	if err := broken.Wait(); err == nil || broken.Ready() == nil {
		t.Fatal("a failed build reads as ready")
	}
	if found := broken.ScanEntry(teammem.Org{}, "b.md", "harmless\n"); len(found) != 1 || found[0].RuleID != "scanner-unavailable" {
		t.Fatalf("an unscannable entry was let through: %v", found)
	}
}
