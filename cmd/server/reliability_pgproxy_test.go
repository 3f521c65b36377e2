package main_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pgProxy forwards TCP connections from a port of its own to Postgres. Down
// simulates a stopped database without touching the shared server: it
// closes the listener and every proxied connection; Up listens on the same
// port again.
type pgProxy struct {
	addr     string // host:port the proxy listens on
	upstream string

	// cut, when not cutNone, makes the next COMMIT a client sends end its
	// connection (see cutBeforeCommit and cutAfterCommit); cuts counts them.
	cut  atomic.Int32
	cuts atomic.Int32
	// settled counts cut connections whose Postgres side has answered and
	// been closed: after a cutAfterCommit, the COMMIT has then taken effect.
	settled atomic.Int32

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// Cut modes of pgProxy.
const (
	cutNone = iota
	// cutBeforeCommit drops a COMMIT and the connection: the transaction
	// surely rolls back, as when the database goes away just before it.
	cutBeforeCommit
	// cutAfterCommit forwards a COMMIT, then drops the connection before
	// the answer: the transaction commits but the server cannot know.
	cutAfterCommit
)

// newPGProxy starts a proxy to upstream on 127.0.0.1:0.
func newPGProxy(t *testing.T, upstream string) *pgProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pgProxy{addr: ln.Addr().String(), upstream: upstream, conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	t.Cleanup(func() {
		p.Down()
		p.wg.Wait()
	})
	return p
}

func (p *pgProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Down
			}
			p.wg.Go(func() { p.forward(c) })
		}
	})
}

// forward pipes one client connection to a fresh upstream connection.
func (p *pgProxy) forward(c net.Conn) {
	u, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, u) {
		return // Down ran meanwhile
	}
	front, back := make(chan error, 1), make(chan struct{})
	go func() { front <- p.frontend(u, c) }()
	go func() {
		_, _ = io.Copy(c, u)
		close(back)
	}()
	frontDone, cut := false, false
	select {
	case err := <-front:
		frontDone = true
		cut = errors.Is(err, errCutAfterCommit) || errors.Is(err, errCutBeforeCommit)
		if errors.Is(err, errCutAfterCommit) {
			// c is closed; keep u open until Postgres answered the COMMIT
			// (the copy to c then fails), lest a reset make it drop the
			// COMMIT unread.
			<-back
		}
	case <-back:
	}
	c.Close()
	u.Close()
	<-back
	if !frontDone {
		<-front
	}
	if cut {
		p.settled.Add(1)
	}
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, u)
	p.mu.Unlock()
}

// frontend copies the client's messages to Postgres one by one, so that a
// cut lands exactly on a COMMIT. It returns when either side fails.
func (p *pgProxy) frontend(dst, src net.Conn) error {
	r := bufio.NewReader(src)
	w := bufio.NewWriter(dst)
	send := func(msg ...[]byte) error {
		for _, m := range msg {
			if _, err := w.Write(m); err != nil {
				return err
			}
		}
		if r.Buffered() > 0 {
			return nil // more is queued: send it together
		}
		return w.Flush()
	}
	// Untyped messages first: SSL or GSS requests, then the startup message.
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n < 8 {
			return errors.New("malformed startup message")
		}
		rest := make([]byte, n-8)
		if _, err := io.ReadFull(r, rest); err != nil {
			return err
		}
		if err := send(hdr[:], rest); err != nil {
			return err
		}
		if code := binary.BigEndian.Uint32(hdr[4:]); code != 80877103 && code != 80877104 {
			break
		}
	}
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return err
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		if n < 4 {
			return errors.New("malformed message")
		}
		body := make([]byte, n-4)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		commit := hdr[0] == 'Q' && strings.EqualFold(strings.TrimRight(string(body), "\x00; "), "commit")
		mode := p.cut.Load()
		if commit && mode != cutNone && p.cut.CompareAndSwap(mode, cutNone) {
			p.cuts.Add(1)
			if mode == cutAfterCommit {
				_ = send(hdr[:], body)
				_ = w.Flush()
				src.Close()
				return errCutAfterCommit
			}
			return errCutBeforeCommit
		}
		if err := send(hdr[:], body); err != nil {
			return err
		}
	}
}

// errCutBeforeCommit and errCutAfterCommit end frontend after a cut.
var (
	errCutBeforeCommit = errors.New("cut before commit")
	errCutAfterCommit  = errors.New("cut after commit")
)

// track registers a connection pair unless the proxy is down.
func (p *pgProxy) track(c, u net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		c.Close()
		u.Close()
		return false
	}
	p.conns[c], p.conns[u] = struct{}{}, struct{}{}
	return true
}

// Down stops accepting and cuts every open connection, as a stopped
// database would.
func (p *pgProxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
}

// Up listens on the proxy's port again.
func (p *pgProxy) Up(t *testing.T) {
	t.Helper()
	var ln net.Listener
	var err error
	for range 100 { // the port was ours a moment ago; TIME_WAIT does not block listening
		if ln, err = net.Listen("tcp", p.addr); err == nil {
			p.serve(ln)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("listen on %s again: %v", p.addr, err)
}

// viaProxy starts a proxy to dsn's server and returns dsn with its host and
// port replaced by the proxy's.
func viaProxy(t *testing.T, dsn string) (string, *pgProxy) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	upstream := u.Host
	if u.Port() == "" {
		upstream = net.JoinHostPort(u.Hostname(), "5432")
	}
	p := newPGProxy(t, upstream)
	u.Host = p.addr
	return u.String(), p
}
