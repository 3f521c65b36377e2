package httpapi

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/teammem/teammem/internal/teammem"
)

// Claude Code's memory-service export (reference §4.2): GET
// …/memories/export streams a store as NDJSON, one JSON object per line:
//
//	{"type":"store","view":"basic"|"full","id":…}   (E2 must start with it)
//	{"type":"memory","id","path","content_sha256","content_size_bytes","updated_at"[,"content"]}
//	{"type":"complete","memory_count":N,"error_count":0}   (always last)
//
// ?view=basic (E2, the client's listing) leaves content out; no view (E1,
// its first pull) carries it. The lines are written as the rows are read,
// through a small buffer: streaming never waits for a whole store. A copy
// of an export up to an eighth of the body cache is kept, by store version,
// so the next export of an unchanged store is one write. A failure after
// the first byte ends the stream without its trailer, which the client
// detects (stream_truncated) and falls back from.

// exportMemories serves GET …/memories/export.
func (s *Server) exportMemories(w http.ResponseWriter, r *http.Request) error {
	sr, err := s.resolveStore(r, false)
	if err != nil {
		return err
	}
	sr.api = apiClaudeCodeMemory
	view := r.URL.Query().Get("view")
	if view != "" && view != "basic" && view != "full" {
		return teammem.Errorf(teammem.EInvalid, "view must be basic or full")
	}
	full := view != "basic"
	if view == "" {
		view = "full"
	}
	outcome := "ok"
	defer func() { s.metrics.Pulls.WithLabelValues(sr.p.Org.Slug, apiClaudeCodeMemory, outcome).Inc() }()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	// An export of a version never changes: this replica serves one it
	// streamed before from the body cache. A miss streams from the
	// snapshot and keeps a copy, bounded, under the snapshot's version.
	key := bodyKey{space: sr.store.Space.ID, version: sr.store.Space.Version, repo: "\x00export\x00" + view}
	if body, ok := s.cache.body(key); ok {
		if sr.store.Space.EntryCount == 0 {
			outcome = "empty"
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
		return nil
	}
	keep := &cappedBuffer{max: maxBodyCacheBytes / 8}
	bw := bufio.NewWriterSize(io.MultiWriter(w, keep), 32<<10)
	line := make([]byte, 0, 512)
	line = append(line, `{"type":"store","view":"`...)
	line = append(line, view...)
	line = append(line, `","id":"`...)
	line = append(line, sr.store.ID()...)
	line = append(line, "\"}\n"...)
	started := false
	count := 0
	head, err := s.store.MemoriesEach(r.Context(), sr.p.Org.ID, sr.store.Space.ID, full, func(_ teammem.Space, e teammem.Entry) error {
		if !started {
			// Headers go once the snapshot is open: a store that cannot be
			// read still gets a proper error status.
			started = true
			w.WriteHeader(http.StatusOK)
		}
		line = appendMemoryLine(line, e, full)
		count++
		if len(line) >= 16<<10 {
			if _, err := bw.Write(line); err != nil {
				return fmt.Errorf("export: %w", err)
			}
			line = line[:0]
		}
		return nil
	})
	if err != nil {
		if !started {
			outcome = "error"
			return err
		}
		outcome = "error"
		_ = bw.Flush() // no trailer: the client sees a truncated stream
		return err     // after the status: the adapter records, never answers
	}
	if !started {
		w.WriteHeader(http.StatusOK)
	}
	if count == 0 {
		outcome = "empty"
	}
	line = append(line, `{"type":"complete","memory_count":`...)
	line = strconv.AppendInt(line, int64(count), 10)
	line = append(line, ",\"error_count\":0}\n"...)
	_, _ = bw.Write(line)
	if bw.Flush() == nil && !keep.over {
		key.version = head.Version // what the snapshot read
		s.cache.putBody(key, keep.b)
	}
	return nil
}

// cappedBuffer keeps what is written to it up to max bytes, then gives up
// (over) and keeps nothing more; it never fails a write.
type cappedBuffer struct {
	b    []byte
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if !c.over {
		if len(c.b)+len(p) > c.max {
			c.over, c.b = true, nil
		} else {
			c.b = append(c.b, p...)
		}
	}
	return len(p), nil
}

// appendMemoryLine appends one memory line of the export.
func appendMemoryLine(b []byte, e teammem.Entry, full bool) []byte {
	b = append(b, `{"type":"memory","id":"`...)
	b = append(b, e.MemoryID...) // [A-Za-z0-9_-]: nothing to escape
	b = append(b, `","path":`...)
	b = appendJSONString(b, teammem.MemoryPath(e.Key))
	b = append(b, `,"content_sha256":"`...)
	b = append(b, teammem.ContentSHA256(e.Checksum)...)
	b = append(b, `","content_size_bytes":`...)
	b = strconv.AppendInt(b, int64(e.Size), 10)
	b = append(b, `,"updated_at":"`...)
	b = e.UpdatedAt.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if full {
		b = append(b, `,"content":`...)
		b = appendJSONString(b, e.Content)
	}
	return append(b, "}\n"...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string. s is valid UTF-8 (keys and
// contents are checked on write); U+2028 and U+2029 are escaped so a line
// is one line to every reader.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != '\u2028' && r != '\u2029' && r != utf8.RuneError {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, `\u202`...)
				b = append(b, hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
