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
	// committing, while a cut COMMIT awaits its answer, is closed once it
	// has it. A cancel request waits for it: the client's driver cancels
	// what its lost connection was running, and a COMMIT that got through
	// must not be cancelled by a request sent after it.
	committing chan struct{}
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
	st := &session{answered: make(chan struct{})}
	front, back := make(chan error, 1), make(chan struct{})
	go func() { front <- p.frontend(u, c, st) }()
	go func() {
		backend(c, u, st)
		close(back)
	}()
	frontDone, cut := false, false
	select {
	case err := <-front:
		frontDone = true
		cut = errors.Is(err, errCutAfterCommit) || errors.Is(err, errCutBeforeCommit)
		if errors.Is(err, errCutAfterCommit) {
			// c is closed; keep u open until Postgres answered the COMMIT,
			// lest a reset make it drop the COMMIT unread.
			select {
			case <-st.answered:
			case <-back:
			}
			p.mu.Lock()
			close(p.committing)
			p.committing = nil
			p.mu.Unlock()
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
// cut lands exactly on a COMMIT: a simple query, or the Bind of a statement
// prepared as COMMIT (in a pipeline, as the store's writes send it). It
// returns when either side fails.
func (p *pgProxy) frontend(dst, src net.Conn, st *session) error {
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
		code := binary.BigEndian.Uint32(hdr[4:])
		if code == 80877102 { // a cancel request
			p.mu.Lock()
			wait := p.committing
			p.mu.Unlock()
			if wait != nil {
				<-wait
			}
		}
		request := code == 80877103 || code == 80877104 // SSL or GSS encryption
		if request {
			st.untyped.Add(1) // answered with one byte, before send lets it be
		}
		if err := send(hdr[:], rest); err != nil {
			return err
		}
		if !request {
			break
		}
	}
	commits := map[string]bool{} // prepared statements, by name: whether each is COMMIT
	for {
		hdr, body, err := readMessage(r)
		if err != nil {
			return err
		}
		var commit bool
		switch hdr[0] {
		case 'Q':
			commit = isCommit(body)
		case 'P': // Parse: statement name, query
			name, query, _ := strings.Cut(string(body), "\x00")
			commits[name] = isCommit([]byte(query))
		case 'B': // Bind: portal name, statement name
			_, rest, _ := strings.Cut(string(body), "\x00")
			name, _, _ := strings.Cut(rest, "\x00")
			commit = commits[name]
		}
		mode := p.cut.Load()
		if commit && mode != cutNone && p.cut.CompareAndSwap(mode, cutNone) {
			p.cuts.Add(1)
			if mode == cutAfterCommit {
				// The COMMIT runs once the pipeline's Sync arrives: send
				// up to it. The next ReadyForQuery is its answer.
				st.committing.Store(true)
				p.mu.Lock()
				p.committing = make(chan struct{})
				p.mu.Unlock()
				_ = sendThroughSync(r, w, hdr, body)
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

// session is what the two directions of one proxied connection share.
type session struct {
	untyped    atomic.Int32 // one-byte answers Postgres owes (SSL, GSS requests)
	committing atomic.Bool  // a cut COMMIT went out: its ReadyForQuery closes answered
	answered   chan struct{}
}

// backend copies Postgres' messages to the client until either side ends,
// and closes st.answered at the ReadyForQuery that answers a cut COMMIT
// (the client's side is closed by then: what is left is read and dropped).
// An encrypted stream, which it cannot follow, is copied as it is.
func backend(dst, src net.Conn, st *session) {
	r := bufio.NewReader(src)
	for {
		if st.untyped.Load() > 0 {
			b, err := r.ReadByte()
			if err != nil {
				return
			}
			st.untyped.Add(-1)
			_, _ = dst.Write([]byte{b})
			if b == 'S' || b == 'G' {
				_, _ = io.Copy(dst, r)
				return
			}
			continue
		}
		hdr, body, err := readMessage(r)
		if err != nil {
			return
		}
		_, _ = dst.Write(append(hdr[:], body...))
		if hdr[0] == 'Z' && st.committing.CompareAndSwap(true, false) {
			close(st.answered)
		}
	}
}

// readMessage reads one typed protocol message.
func readMessage(r *bufio.Reader) (hdr [5]byte, body []byte, err error) {
	if _, err = io.ReadFull(r, hdr[:]); err != nil {
		return hdr, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n < 4 {
		return hdr, nil, errors.New("malformed message")
	}
	body = make([]byte, n-4)
	_, err = io.ReadFull(r, body)
	return hdr, body, err
}

// sendThroughSync writes the message hdr+body, then copies the client's
// messages up to a Sync, which makes an extended-protocol COMMIT run (a
// simple query runs at once), and flushes.
func sendThroughSync(r *bufio.Reader, w *bufio.Writer, hdr [5]byte, body []byte) error {
	for {
		if _, err := w.Write(hdr[:]); err != nil {
			return err
		}
		if _, err := w.Write(body); err != nil {
			return err
		}
		if hdr[0] == 'Q' || hdr[0] == 'S' {
			return w.Flush()
		}
		var err error
		if hdr, body, err = readMessage(r); err != nil {
			return err
		}
	}
}

// isCommit reports whether a query string (NUL-terminated) is COMMIT.
func isCommit(query []byte) bool {
	return strings.EqualFold(strings.TrimRight(string(query), "\x00; "), "commit")
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
