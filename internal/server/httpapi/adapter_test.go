package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// adapterBundle is a server whose log lines and metrics a test reads, on an
// empty SQLite file the adapter's handlers here never reach.
type adapterBundle struct {
	s   *Server
	mu  sync.Mutex
	log bytes.Buffer
}

func setupAdapter(t *testing.T) *adapterBundle {
	t.Helper()
	b := &adapterBundle{}
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&b.mu, &b.log}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b.s = New(st, nil, Config{MaxBodyBytes: 1 << 20}, logger, telemetry.New())
	return b
}

// lockedWriter lets the server's goroutines and the test share a buffer.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lines returns the log lines with message msg.
func (b *adapterBundle) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.log.String()), "\n") {
		var m map[string]any
		if l == "" || json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// requests is the request counter of an unrouted GET with status code,
// as the metrics export it.
func (b *adapterBundle) requests(code int) float64 {
	families, _ := b.s.metrics.Registry.Gather()
	for _, f := range families {
		if f.GetName() != "teammem_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["route"] == telemetry.RouteUnmatched && labels["method"] == "GET" && labels["code"] == fmt.Sprint(code) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestAdapterNeverWritesAfterTheResponseBegan: once a handler has sent its
// status (or flushed, or written body), a returned error is logged once and
// nothing more is written, in either envelope.
func TestAdapterNeverWritesAfterTheResponseBegan(t *testing.T) {
	for name, begin := range map[string]func(w http.ResponseWriter){
		"header": func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) },
		"body":   func(w http.ResponseWriter) { _, _ = w.Write([]byte("partial")) },
		"flush":  func(w http.ResponseWriter) { _ = http.NewResponseController(w).Flush() },
	} {
		for _, store := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s store=%v", name, store), func(t *testing.T) {
				b := setupAdapter(t)
				fn := func(w http.ResponseWriter, r *http.Request) error {
					w.Header().Set("Content-Type", "text/plain")
					begin(w)
					return teammem.Errorf(teammem.EInternal, "the snapshot broke off")
				}
				adapt := b.s.handle
				if store {
					adapt = b.s.storeHandle
				}
				rec := httptest.NewRecorder()
				b.s.observe(adapt(fn)).ServeHTTP(rec, httptest.NewRequest("GET", "/export", nil))
				if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "error") {
					t.Errorf("answered %d %q, want the 200 as begun and no error body", rec.Code, rec.Body)
				}
				if ct := rec.Header().Get("Content-Type"); ct != "text/plain" {
					t.Errorf("Content-Type = %q: a second header was set", ct)
				}
				if got := b.lines(t, "request failed after its response began"); len(got) != 1 || got[0]["code"] != teammem.EInternal {
					t.Errorf("log lines of the failure: %v, want one with code internal", got)
				}
				if got := b.lines(t, "request failed"); len(got) != 0 {
					t.Errorf("the error was also logged as an answered failure: %v", got)
				}
				if n := b.requests(http.StatusOK); n != 1 {
					t.Errorf("requests recorded with 200: %v, want 1", n)
				}
			})
		}
	}
}

// TestAdapterAnswersBeforeTheResponseBegan: an error before anything was
// written is still the error body, with its status.
func TestAdapterAnswersBeforeTheResponseBegan(t *testing.T) {
	b := setupAdapter(t)
	fn := func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("ETag", `"x"`) // a header set, not sent, begins nothing
		return teammem.Errorf(teammem.EConflict, "no")
	}
	rec := httptest.NewRecorder()
	b.s.observe(b.s.handle(fn)).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), `"conflict"`) {
		t.Errorf("answered %d %q, want the 409 error body", rec.Code, rec.Body)
	}
}

// TestAdapterRecordsClientGoneAs499: a request whose client went away
// while it was served is recorded as 499 and not logged as a failure,
// whatever error the handler returns (it is still answered, for a client
// that only half-closed); one that ran out of time is the server's
// failure, answered 503 and logged.
func TestAdapterRecordsClientGoneAs499(t *testing.T) {
	t.Run("cancelled", func(t *testing.T) {
		b := setupAdapter(t)
		ctx, cancel := context.WithCancel(context.Background())
		fn := func(w http.ResponseWriter, r *http.Request) error {
			cancel() // the client hangs up while the store is asked
			<-r.Context().Done()
			return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EUnavailable, Message: "request cancelled or timed out"}, r.Context().Err())
		}
		b.s.observe(b.s.handle(fn)).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil).WithContext(ctx))
		if n := b.requests(statusClientClosed); n != 1 {
			t.Errorf("requests recorded with 499: %v, want 1", n)
		}
		if got := b.lines(t, "request failed"); len(got) != 0 {
			t.Errorf("a client going away was logged as a failure: %v", got)
		}
		got := b.lines(t, "request")
		if len(got) != 1 || got[0]["status"] != float64(statusClientClosed) || got[0]["level"] != "INFO" {
			t.Errorf("request log lines: %v, want one at INFO with status 499", got)
		}
	})
	t.Run("timed out", func(t *testing.T) {
		b := setupAdapter(t)
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		fn := func(w http.ResponseWriter, r *http.Request) error {
			return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EUnavailable, Message: "request cancelled or timed out"}, r.Context().Err())
		}
		rec := httptest.NewRecorder()
		b.s.observe(b.s.handle(fn)).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil).WithContext(ctx))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("a request out of time answered %d, want 503", rec.Code)
		}
		if got := b.lines(t, "request failed"); len(got) != 1 {
			t.Errorf("log lines of the failure: %v, want one", got)
		}
	})
}

// TestClientCancelsMidRequest drives the real net/http server: the client
// cancels a request its handler is still serving, and the server records
// it as 499 once the handler returns.
func TestClientCancelsMidRequest(t *testing.T) {
	b := setupAdapter(t)
	started := make(chan struct{})
	srv := httptest.NewServer(b.s.observe(b.s.handle(func(w http.ResponseWriter, r *http.Request) error {
		close(started)
		<-r.Context().Done()
		return fmt.Errorf("read space: %w", r.Context().Err())
	})))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/x", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled request got an answer")
	}
	for deadline := time.Now().Add(10 * time.Second); b.requests(statusClientClosed) != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("no 499 recorded; request lines: %v", b.lines(t, "request"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := b.lines(t, "request failed"); len(got) != 0 {
		t.Errorf("a client going away was logged as a failure: %v", got)
	}
}

// TestErrorDropsTheBodysHeaders: a handler that set the headers of the
// body it meant to send (an export's) and then failed before sending any
// of it is answered with an error that carries neither.
func TestErrorDropsTheBodysHeaders(t *testing.T) {
	b := setupAdapter(t)
	rec := httptest.NewRecorder()
	b.s.handle(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Content-Disposition", `attachment; filename="teammem-team.tar.gz"`)
		w.Header().Set("ETag", `"sha256:x"`)
		return teammem.Errorf(teammem.EInternal, "export: bad header")
	}).ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != http.StatusInternalServerError || rec.Header().Get("Content-Disposition") != "" || rec.Header().Get("ETag") != "" {
		t.Fatalf("answered %d with headers %v", rec.Code, rec.Header())
	}
}

// TestHalfClosedClientGetsItsAnswer drives the real net/http server with a
// client that sends its request and closes its side for writing, as some
// clients do: net/http cancels the request's context on that EOF, yet the
// client waits for the answer, which must be the error, not net/http's
// implicit empty 200.
func TestHalfClosedClientGetsItsAnswer(t *testing.T) {
	b := setupAdapter(t)
	srv := httptest.NewServer(b.s.observe(b.s.handle(func(w http.ResponseWriter, r *http.Request) error {
		<-r.Context().Done() // the half-close, seen by net/http's background read
		return fmt.Errorf("%w: %w", &teammem.Error{Code: teammem.EUnavailable, Message: "request cancelled or timed out"}, r.Context().Err())
	})))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"unavailable"`) {
		t.Fatalf("a half-closed client got %d %q, want the 503 error body", resp.StatusCode, body)
	}
}
