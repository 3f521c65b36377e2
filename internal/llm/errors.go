package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Error is a failed call to a model provider. It never contains the API key.
type Error struct {
	// Provider is ProviderAnthropic or ProviderOpenAI.
	Provider string
	// StatusCode is the HTTP status of the last attempt, or 0 when no
	// response arrived (timeout, connection error, cancellation).
	StatusCode int
	// Type is the provider's error type, e.g. "rate_limit_error", when given.
	Type string
	// Message is the provider's explanation or a description of the failure.
	Message string
	// RequestID is the provider's id for the failed request, for support.
	RequestID string
	// RetryAfter is the wait the provider asked for, if any.
	RetryAfter time.Duration
	// Attempts is how many HTTP attempts were made.
	Attempts int
	// Hint suggests a fix, e.g. which variable to check.
	Hint string
	// Err is the underlying cause when no HTTP error response arrived:
	// context.Canceled, context.DeadlineExceeded, a network error.
	Err error
}

// Error formats e as "provider: HTTP status (type): message [request id]
// (after n attempts); hint".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, "HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
		if e.Type != "" {
			fmt.Fprintf(&b, " (%s)", e.Type)
		}
		if e.Message != "" {
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Message)
	if e.RequestID != "" {
		fmt.Fprintf(&b, " [request %s]", e.RequestID)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns the underlying cause, so errors.Is(err, context.Canceled)
// and errors.Is(err, context.DeadlineExceeded) work.
func (e *Error) Unwrap() error { return e.Err }

// redacted replaces secrets in messages.
const redacted = "[redacted]"

// redact removes secret from s. Providers sometimes echo a rejected key.
func redact(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, redacted)
}

// maxMessage bounds the provider message kept in an Error.
const maxMessage = 500

// describeBody extracts the error type and message from an error response
// body. It understands Anthropic's {"type":"error","error":{...}}, OpenAI's
// {"error":{"message":...}}, {"error":"..."} (Ollama), {"message":...}
// (vLLM) and falls back to the start of a plain-text body.
func describeBody(res *http.Response) (typ, msg string) {
	if res == nil || res.Body == nil {
		return "", ""
	}
	data, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	// Put the body back for anyone else who reads it.
	res.Body = io.NopCloser(bytes.NewReader(data))
	var body struct {
		Error   json.RawMessage `json:"error"`
		Type    string          `json:"type"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(data, &body); err != nil {
		return "", truncate(strings.TrimSpace(string(data)))
	}
	var nested struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	var flat string
	switch {
	case json.Unmarshal(body.Error, &nested) == nil && (nested.Message != "" || nested.Type != ""):
		return nested.Type, truncate(nested.Message)
	case json.Unmarshal(body.Error, &flat) == nil && flat != "":
		return "", truncate(flat)
	default:
		return body.Type, truncate(body.Message)
	}
}

func truncate(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// requestID returns the provider's request id header.
func requestID(res *http.Response) string {
	if id := res.Header.Get("request-id"); id != "" { // Anthropic
		return id
	}
	return res.Header.Get("x-request-id") // OpenAI and most compatible servers
}

// statusHint suggests a fix for a status that usually means bad configuration.
func statusHint(c Config, status int) string {
	keyVar := EnvAnthropicKey
	if c.Provider == ProviderOpenAI {
		keyVar = EnvOpenAIKey
	}
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "check " + keyVar
	case http.StatusNotFound:
		if c.BaseURL != "" {
			return "check " + EnvModel + " and " + EnvBaseURL
		}
		return "check " + EnvModel
	}
	return ""
}
