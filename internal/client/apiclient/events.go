package apiclient

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// StreamEvents follows the repo's server-sent events until ctx ends,
// sending the scope of every change to changes. up reports whether the
// stream is connected, so the caller can poll while it is not. It
// reconnects with backoff and resumes with Last-Event-ID.
func (c *Client) StreamEvents(ctx context.Context, changes chan<- teammem.Scope, up func(bool)) {
	lastID := ""
	backoff := time.Second
	for ctx.Err() == nil {
		start := time.Now()
		err := c.streamOnce(ctx, &lastID, changes, up)
		up(false)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			backoff = time.Second // it was healthy for a while
		}
		_ = err
		select {
		case <-ctx.Done():
			return
		case <-time.After(Jitter(backoff)):
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}

func (c *Client) streamOnce(ctx context.Context, lastID *string, changes chan<- teammem.Scope, up func(bool)) error {
	h := http.Header{"Accept": {"text/event-stream"}}
	if *lastID != "" {
		h.Set("Last-Event-ID", *lastID)
	}
	// One attempt, no overall timeout: the stream reconnects on its own.
	resp, err := c.send(ctx, c.apiClient(true), request{method: http.MethodGet, path: c.repoPath() + "/events", header: h})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	up(true)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 4096), 1<<20)
	var event, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "change" {
				var d struct {
					Scope teammem.Scope `json:"scope"`
				}
				if json.Unmarshal([]byte(data), &d) == nil && d.Scope.Valid() {
					select {
					case changes <- d.Scope:
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			}
			event, data = "", ""
		case strings.HasPrefix(line, "id:"):
			*lastID = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			data = strings.TrimSpace(line[5:])
		}
	}
	return sc.Err()
}
