package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxLineSize is the default cap on one line's length in bytes, newline excluded. Claude
// Code flushes at most 100 MiB at a time and single records (a pasted image, a large tool
// result) reach tens of MiB, so the cap is generous; longer lines are skipped and counted
// in ReadStats.Oversized.
const MaxLineSize = 64 << 20

// readBufferSize is the bufio buffer size; lines longer than it are assembled in Reader.long.
const readBufferSize = 64 << 10

// keepLongBuffer is the largest assembly buffer kept between lines; a bigger one is dropped
// so that one huge line does not pin its memory for the rest of the file.
const keepLongBuffer = 1 << 20

// ReadStats counts what a Reader has seen so far.
type ReadStats struct {
	// Lines counts every line read, blank, malformed and oversized ones included.
	Lines int
	// Records counts the records Next returned, unknown types included.
	Records int
	// Blank counts lines holding only whitespace (or only a BOM).
	Blank int
	// Malformed counts skipped lines that are not a JSON object with a string "type".
	Malformed int
	// Oversized counts skipped lines longer than the reader's line cap.
	Oversized int
	// Unknown counts returned records whose Type is not Known.
	Unknown int
	// Truncated reports that the file ended with an unterminated line that did not parse,
	// the trace of a write cut short; that line is also counted in Malformed.
	Truncated bool
}

// Reader streams records from a transcript. It is not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	closer  io.Closer
	maxLine int
	long    []byte // assembles lines longer than the bufio buffer
	stats   ReadStats
	err     error // sticky read error
}

// NewReader returns a Reader over r with the default line cap. It does not close r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, readBufferSize), maxLine: MaxLineSize}
}

// Open opens the transcript at path for reading; Close releases the file.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	r := NewReader(f)
	r.closer = f
	return r, nil
}

// Close closes the file opened by Open; for a Reader from NewReader it does nothing.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// SetMaxLineSize sets the longest line, in bytes without the newline, that the reader
// parses; n <= 0 restores MaxLineSize. Call it before the first Next.
func (r *Reader) SetMaxLineSize(n int) {
	if n <= 0 {
		n = MaxLineSize
	}
	r.maxLine = n
}

// Stats returns the counts accumulated so far.
func (r *Reader) Stats() ReadStats { return r.stats }

// Next returns the next record. Blank, malformed and oversized lines are skipped and
// counted. It returns io.EOF after the last record, or the underlying reader's error.
func (r *Reader) Next() (Record, error) {
	for {
		line, final, oversized, err := r.readLine()
		if err != nil {
			return Record{}, err
		}
		r.stats.Lines++
		if oversized {
			r.stats.Oversized++
			continue
		}
		line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), utf8BOM))
		if len(line) == 0 {
			r.stats.Blank++
			continue
		}
		rec, err := ParseLine(line)
		if err != nil {
			r.stats.Malformed++
			r.stats.Truncated = r.stats.Truncated || final
			continue
		}
		rec.Line = r.stats.Lines
		r.stats.Records++
		if !rec.Type.Known() {
			r.stats.Unknown++
		}
		return rec, nil
	}
}

// readLine returns the next line without its newline. final reports that the line was not
// terminated by a newline (it ended the input). The returned slice is only valid until the
// next call. An oversized line is consumed to its end and returned empty.
func (r *Reader) readLine() (line []byte, final, oversized bool, err error) {
	if r.err != nil {
		return nil, false, false, r.err
	}
	if cap(r.long) > keepLongBuffer {
		r.long = nil
	}
	chunk, err := r.br.ReadSlice('\n')
	if err == nil {
		// The common case: the whole line sits in the bufio buffer, no copy needed.
		line = chunk[:len(chunk)-1]
		return line, false, len(line) > r.maxLine, nil
	}
	r.long = r.long[:0]
	size := 0
	for {
		size += len(chunk)
		if !oversized {
			if size > r.maxLine+1 { // +1: chunk may end with the newline
				oversized, r.long = true, r.long[:0]
			} else {
				r.long = append(r.long, chunk...)
			}
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			break
		}
		chunk, err = r.br.ReadSlice('\n')
	}
	switch {
	case err == nil:
		size-- // the newline
	case errors.Is(err, io.EOF):
		if size == 0 {
			r.err = io.EOF
			return nil, false, false, io.EOF
		}
		final = true
	default:
		r.err = fmt.Errorf("read transcript: %w", err)
		return nil, false, false, r.err
	}
	if oversized || size > r.maxLine {
		return nil, final, true, nil
	}
	return bytes.TrimSuffix(r.long, []byte("\n")), final, false, nil
}
