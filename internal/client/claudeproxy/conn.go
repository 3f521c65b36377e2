package claudeproxy

import (
	"bufio"
	"io"
	"net"
	"sync"
)

// tunnel copies bytes both ways until either side closes.
func (p *Proxy) tunnel(client, upstream net.Conn) {
	p.tunnels.Add(1)
	go func() {
		defer p.tunnels.Done()
		done := make(chan struct{}, 2)
		cp := func(dst, src net.Conn) {
			io.Copy(dst, src) //nolint:errcheck // either side closing ends the tunnel
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				cw.CloseWrite() //nolint:errcheck
			}
			done <- struct{}{}
		}
		go cp(upstream, client)
		go cp(client, upstream)
		<-done
		<-done
		client.Close()
		upstream.Close()
	}()
}

// bufferedConn reads what the HTTP server buffered before the hijack first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite half-closes the underlying TCP connection when it can.
func (c *bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connListener hands terminated CONNECT connections to the inner server.
type connListener struct {
	ch     chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnListener() *connListener {
	return &connListener{ch: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *connListener) push(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.closed:
		return false
	}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *connListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
