package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/teammem/teammem/internal/llm"
)

// wire is one provider's HTTP wire format.
type wire struct {
	name string
	path string
	// authorized reports whether the request carries credentials the
	// provider would demand.
	authorized func(r *http.Request) bool
	// decode turns a request body into the request and the model it names.
	decode func(body []byte) (llm.Request, string, error)
	// encode writes a successful reply; n numbers it for ids.
	encode func(w http.ResponseWriter, model string, n int64, resp llm.Response)
	// fail writes an error reply.
	fail func(w http.ResponseWriter, status int, message, retryAfter string)
}

// serve starts an httptest server answering f's endpoint from s and closes
// it when the test ends. A request the fake cannot decode, or one beyond the
// script, fails the test and is answered with a 400, which the client does
// not retry.
func serve(t testing.TB, s *Script, f wire) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != f.path:
			f.fail(w, http.StatusNotFound, "llmtest: no endpoint "+r.URL.Path+"; the "+f.name+" fake serves "+f.path, "")
			return
		case r.Method != http.MethodPost:
			f.fail(w, http.StatusMethodNotAllowed, "llmtest: "+r.Method+" not allowed", "")
			return
		case !f.authorized(r):
			f.fail(w, http.StatusUnauthorized, "llmtest: no API key in the request", "")
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			f.fail(w, http.StatusBadRequest, err.Error(), "")
			return
		}
		req, model, err := f.decode(body)
		if err == nil {
			err = req.Validate()
		}
		if err != nil {
			t.Errorf("llmtest: %s fake cannot use the request: %v\n%s", f.name, err, body)
			f.fail(w, http.StatusBadRequest, err.Error(), "")
			return
		}
		reply, err := s.take(req, body)
		if err != nil {
			t.Errorf("llmtest: %s fake: %v", f.name, err)
			f.fail(w, http.StatusBadRequest, err.Error(), "")
			return
		}
		if reply.failed() {
			retryAfter := reply.RetryAfter
			if retryAfter == "" && (reply.Status == http.StatusTooManyRequests || reply.Status >= 500) {
				retryAfter = "0"
			}
			f.fail(w, reply.Status, reply.Message, retryAfter)
			return
		}
		f.encode(w, model, n.Add(1), reply.response())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, header map[string]string, v any) {
	for k, val := range header {
		if val != "" {
			w.Header().Set(k, val)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// textAndToolUses splits a response's content for encoding.
func textAndToolUses(resp llm.Response) (texts []string, uses []llm.Block) {
	for _, b := range resp.Content {
		switch b.Kind {
		case llm.KindText:
			texts = append(texts, b.Text)
		case llm.KindToolUse:
			uses = append(uses, b)
		}
	}
	return texts, uses
}

// inputJSON returns a tool_use's Input, an empty object when unset.
func inputJSON(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return json.RawMessage("{}")
	}
	return in
}

// rawInput turns a wire value into Input: valid JSON as is, anything else
// as a JSON string, mirroring the client.
func rawInput(s string) json.RawMessage {
	switch {
	case s == "":
		return json.RawMessage("{}")
	case json.Valid([]byte(s)):
		return json.RawMessage(s)
	default:
		q, _ := json.Marshal(s)
		return q
	}
}

func requestID(prefix string, n int64) string { return prefix + strconv.FormatInt(n, 10) }

func statusMessage(status int, message string) string {
	if message != "" {
		return message
	}
	return fmt.Sprintf("%d %s", status, http.StatusText(status))
}
