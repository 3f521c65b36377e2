package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// rawConn is a minimal HTTP/1.1 keep-alive client over one TCP connection:
// it writes pre-built request bytes and reads just enough of the response
// (status, Content-Length or chunked framing) to find its end. Like wrk, it
// keeps the load generator's own cost far below the server's, so that the
// ratios compare servers rather than HTTP client stacks.
type rawConn struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
}

// dialRaw connects to addr (host:port).
func dialRaw(addr string) (*rawConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &rawConn{addr: addr, c: c, br: bufio.NewReaderSize(c, 64<<10)}, nil
}

func (rc *rawConn) Close() error { return rc.c.Close() }

// response is what rawConn.do keeps of a response.
type response struct {
	status int
	header map[string]string // only the few headers the bench reads
	body   []byte            // only when the caller asked for it
}

// keptHeaders are the response headers do records.
var keptHeaders = []string{"etag", "content-length", "transfer-encoding", "connection", "server-timing"}

// do sends req and reads one response, keeping the body when keep is set.
// A connection the server closed is redialled once.
func (rc *rawConn) do(req []byte, keep bool) (response, error) {
	resp, err := rc.roundTrip(req, keep)
	if err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)) {
		rc.c.Close()
		fresh, derr := dialRaw(rc.addr)
		if derr != nil {
			return resp, derr
		}
		*rc = *fresh
		return rc.roundTrip(req, keep)
	}
	return resp, err
}

// roundTrip writes req and reads the response it gets.
func (rc *rawConn) roundTrip(req []byte, keep bool) (response, error) {
	var resp response
	if _, err := rc.c.Write(req); err != nil {
		return resp, err
	}
	line, err := rc.br.ReadSlice('\n')
	if err != nil {
		return resp, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return resp, fmt.Errorf("malformed status line %q", line)
	}
	if resp.status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return resp, fmt.Errorf("malformed status line %q", line)
	}
	if resp.header, err = rc.readHeader(); err != nil {
		return resp, err
	}
	if err := rc.readBody(&resp, keep); err != nil {
		return resp, err
	}
	if resp.header["connection"] == "close" {
		rc.c.Close()
	}
	return resp, nil
}

// readHeader reads header lines up to the blank line, keeping keptHeaders.
func (rc *rawConn) readHeader() (map[string]string, error) {
	h := map[string]string{}
	for {
		line, err := rc.br.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return h, nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		lname := bytes.ToLower(bytes.TrimSpace(name))
		for _, k := range keptHeaders {
			if string(lname) == k {
				h[k] = string(bytes.TrimSpace(value))
			}
		}
	}
}

// readBody consumes the body that the status and framing headers announce.
func (rc *rawConn) readBody(resp *response, keep bool) error {
	if resp.status == 304 || resp.status == 204 || resp.status < 200 {
		return nil
	}
	var buf *bytes.Buffer
	if keep {
		buf = &bytes.Buffer{}
	}
	if resp.header["transfer-encoding"] == "chunked" {
		if err := rc.readChunked(buf); err != nil {
			return err
		}
	} else if cl := resp.header["content-length"]; cl != "" {
		n, err := strconv.Atoi(cl)
		if err != nil {
			return fmt.Errorf("bad Content-Length %q", cl)
		}
		if err := rc.consume(n, buf); err != nil {
			return err
		}
	} else {
		return errors.New("response without Content-Length or chunked framing")
	}
	if buf != nil {
		resp.body = buf.Bytes()
	}
	return nil
}

// readChunked reads a chunked body into buf (nil: discards it).
func (rc *rawConn) readChunked(buf *bytes.Buffer) error {
	for {
		line, err := rc.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		sizeText, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseInt(string(sizeText), 16, 64)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			for { // trailers, then the blank line
				l, err := rc.br.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimRight(l, "\r\n")) == 0 {
					return nil
				}
			}
		}
		if err := rc.consume(int(n), buf); err != nil {
			return err
		}
		if _, err := rc.br.Discard(2); err != nil { // CRLF after the chunk
			return err
		}
	}
}

// consume reads n body bytes into buf, or discards them when buf is nil.
func (rc *rawConn) consume(n int, buf *bytes.Buffer) error {
	if buf == nil {
		_, err := rc.br.Discard(n)
		return err
	}
	_, err := io.CopyN(buf, rc.br, int64(n))
	return err
}

// request builds the bytes of one HTTP/1.1 request.
func request(method, host, target string, header map[string]string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: teammem-bench\r\n", method, target, host)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	if body != nil {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}
