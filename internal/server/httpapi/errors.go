package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// statusByCode is the one table from domain error codes to HTTP statuses.
var statusByCode = map[string]int{
	teammem.EInvalid:            http.StatusBadRequest,
	teammem.EUnauthorized:       http.StatusUnauthorized,
	teammem.EForbidden:          http.StatusForbidden,
	teammem.ENotFound:           http.StatusNotFound,
	teammem.EConflict:           http.StatusConflict,
	teammem.EGone:               http.StatusGone,
	teammem.EPreconditionFailed: http.StatusPreconditionFailed,
	teammem.ETooLarge:           http.StatusRequestEntityTooLarge,
	teammem.ESecretDetected:     http.StatusUnprocessableEntity,
	teammem.ERateLimited:        http.StatusTooManyRequests,
	teammem.EUnavailable:        http.StatusServiceUnavailable,
	teammem.EInternal:           http.StatusInternalServerError,
}

// writeError writes err as the JSON error body. Only internal errors are
// logged with their detail; the client gets the code and a safe message.
// Under the memory store routes it is Anthropic's envelope instead, whoever
// refuses (a middleware, the router, the handler), since those clients
// parse no other.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if isStorePath(r.URL.Path) {
		s.writeStoreError(w, r, err)
		return
	}
	err = asTooLarge(s.withhold(r, err))
	code := teammem.ErrorCode(err)
	status, ok := statusByCode[code]
	if !ok {
		status, code = http.StatusInternalServerError, teammem.EInternal
	}
	if code == teammem.EInternal || code == teammem.EUnavailable {
		s.logFailure(r, code, err)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="teammem"`)
	}
	if code == teammem.ERateLimited {
		if ra, ok := teammem.ErrorDetails(err)["retry_after_seconds"]; ok {
			w.Header().Set("Retry-After", jsonString(ra))
		}
	}
	writeJSON(w, status, wire.ErrorBody{Error: wire.ErrorObject{Type: code, Message: teammem.ErrorMessage(err), Details: wire.ErrorDetails(err)}})
}

// withhold clears an error of any secret the request carried, a key or a
// slug it names (teammem.WithholdSecrets), before it is answered.
func (s *Server) withhold(r *http.Request, err error) error {
	return teammem.WithholdSecrets(s.readyScanner(), principal(r).Org, err)
}

// readyScanner is the server's scanner when it can scan now, else nil: an
// error answer never waits for the rules to compile. In those first moments
// after start an error is answered as it is; the write path's own refusals
// wait for the rules and are cleared all the same (teammem.Writer).
func (s *Server) readyScanner() teammem.SecretScanner {
	sc := s.writer.Scanner
	if rd, ok := sc.(interface{ Ready() error }); ok && rd.Ready() != nil {
		return nil
	}
	return sc
}

// logText is err's text for the log, or a placeholder when the text holds
// what looks like a secret (a wrapped error may name a key).
func (s *Server) logText(r *http.Request, err error) string {
	text := err.Error()
	if sc := s.readyScanner(); sc != nil {
		for _, f := range sc.ScanEntry(principal(r).Org, "log", teammem.NameScanText(text)) {
			if f.RuleID != teammem.RuleScannerUnavailable {
				return "(error text withheld: it holds what looks like a secret, " + f.Label + ")"
			}
		}
	}
	return text
}

// asTooLarge returns err, or for a body over its limit the too_large error
// the client gets, which the push metrics count as such.
func asTooLarge(err error) error {
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return teammem.BodyTooLarge(maxErr.Limit)
	}
	return err
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// marshalJSON encodes v as writeJSON does.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeJSONBytes writes an encoded JSON body with the given status.
func writeJSONBytes(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeJSON writes v as a JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// decodeJSON reads a JSON body into v; malformed bodies are EInvalid and
// bodies over the limit surface as *http.MaxBytesError. A large body is
// checked and decoded in one of the writer's check slots: decoding 4 MB of
// JSON is as heavy as scanning it, and left unbounded, one org's
// concurrent large requests would take every core from everyone else's
// small ones.
func decodeJSON(r *http.Request, v any) error {
	body, err := readBody(r)
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return err
		}
		return teammem.Errorf(teammem.EInvalid, "request body could not be read")
	}
	if lb, ok := r.Body.(*limitedBody); ok && lb.slot != nil && len(body) >= sharedDecodeBytes {
		release, err := lb.slot(r.Context())
		if err != nil {
			return err
		}
		defer release()
	}
	if err := checkJSONText(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return teammem.Errorf(teammem.EInvalid, "request body is not valid JSON of the expected shape: %s", jsonErrorText(err))
	}
	if dec.More() {
		return teammem.Errorf(teammem.EInvalid, "request body has data after the JSON value")
	}
	return nil
}

// sharedDecodeBytes is the body size from which decodeJSON takes a check
// slot: decoding less costs well under a millisecond.
const sharedDecodeBytes = 256 << 10

// readBody reads a request body whole, into a buffer of the announced
// length (the body limit already refused a larger one), so a large body is
// not copied again at every doubling.
func readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength <= 0 {
		return io.ReadAll(r.Body)
	}
	b := bytes.NewBuffer(make([]byte, 0, r.ContentLength+bytes.MinRead))
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

// jsonErrorText describes a decoding error without echoing body content.
func jsonErrorText(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return "syntax error"
	case errors.As(err, &typ):
		if typ.Field != "" {
			return "field " + typ.Field + " has the wrong type"
		}
		return "wrong type"
	default:
		return "unreadable body"
	}
}
