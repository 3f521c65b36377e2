package llm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// Error bodies in each provider's wire format.
const (
	anthropicRateLimited = `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
	anthropicOverloaded  = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	anthropicBadRequest  = `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`
	openAIRateLimited    = `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	openAIServerError    = `{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}`
	openAIBadRequest     = `{"error":{"message":"model 'nope' not found","type":"invalid_request_error","param":null,"code":null}}`
)

// providerCase runs a test against both providers with their own bodies.
type providerCase struct {
	provider                             string
	ok, rateLimited, serverError, badReq string
}

var providerCases = []providerCase{
	{ProviderAnthropic, anthropicTextReply, anthropicRateLimited, anthropicOverloaded, anthropicBadRequest},
	{ProviderOpenAI, openAITextReply, openAIRateLimited, openAIServerError, openAIBadRequest},
}

var hi = Request{Messages: []Message{{Role: RoleUser, Content: []Block{TextBlock("Hi")}}}}

func TestRetryAfterRateLimit(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.provider, func(t *testing.T) {
			t.Parallel()
			b := setup(t, pc.provider, Config{MaxRetries: 2},
				reply{status: 429, header: map[string]string{"Retry-After": "0"}, body: pc.rateLimited},
				reply{body: pc.ok})
			resp, err := b.model.Complete(t.Context(), hi)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Text() == "" || b.fake.requests() != 2 {
				t.Errorf("got %q after %d requests, want a reply after 2", resp.Text(), b.fake.requests())
			}
		})
	}
}

func TestRetryServerErrorsExhausted(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.provider, func(t *testing.T) {
			t.Parallel()
			b := setup(t, pc.provider, Config{MaxRetries: 3}, reply{status: 500, body: pc.serverError})
			_, err := b.model.Complete(t.Context(), hi)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.StatusCode != 500 || e.Attempts != 4 || b.fake.requests() != 4 {
				t.Errorf("status %d, %d attempts, %d requests; want 500 after 4", e.StatusCode, e.Attempts, b.fake.requests())
			}
			if e.Message == "" || !strings.Contains(err.Error(), e.Message) {
				t.Errorf("error %q lacks the provider's message %q", err, e.Message)
			}
		})
	}
}

func TestNoRetryOnClientError(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.provider, func(t *testing.T) {
			t.Parallel()
			b := setup(t, pc.provider, Config{MaxRetries: 3}, reply{status: 400, body: pc.badReq})
			_, err := b.model.Complete(t.Context(), hi)
			var e *Error
			if !errors.As(err, &e) || e.StatusCode != 400 || e.Type != "invalid_request_error" {
				t.Fatalf("err = %#v, want a 400 invalid_request_error", err)
			}
			if b.fake.requests() != 1 {
				t.Errorf("%d requests, want 1", b.fake.requests())
			}
		})
	}
}

func TestNegativeMaxRetriesDisablesRetries(t *testing.T) {
	t.Parallel()
	b := setup(t, ProviderOpenAI, Config{MaxRetries: -1}, reply{status: 503, body: openAIServerError})
	if _, err := b.model.Complete(t.Context(), hi); err == nil || b.fake.requests() != 1 {
		t.Errorf("err = %v after %d requests, want an error after 1", err, b.fake.requests())
	}
}

func TestLongRetryAfterEndsTheCall(t *testing.T) {
	t.Parallel()
	b := setup(t, ProviderAnthropic, Config{}, reply{status: 429, header: map[string]string{"Retry-After": "600"}, body: anthropicRateLimited})
	_, err := b.model.Complete(t.Context(), hi)
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 429 || e.RetryAfter != 10*time.Minute {
		t.Fatalf("err = %v, want a 429 asking for 10m", err)
	}
	if b.fake.requests() != 1 {
		t.Errorf("%d requests, want 1", b.fake.requests())
	}
}

func TestTimeoutPerAttempt(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.provider, func(t *testing.T) {
			t.Parallel()
			b := setup(t, pc.provider, Config{Timeout: 50 * time.Millisecond}, reply{block: true})
			_, err := b.model.Complete(t.Context(), hi)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want a deadline error", err)
			}
			if !strings.Contains(err.Error(), EnvTimeout) {
				t.Errorf("error %q does not name %s", err, EnvTimeout)
			}
			if b.fake.requests() != 1 {
				t.Errorf("%d requests, want 1: a timed out attempt is not retried", b.fake.requests())
			}
		})
	}
}

func TestCancelDuringRequest(t *testing.T) {
	t.Parallel()
	for _, pc := range providerCases {
		t.Run(pc.provider, func(t *testing.T) {
			t.Parallel()
			b := setup(t, pc.provider, Config{}, reply{block: true})
			ctx, cancel := context.WithCancel(t.Context())
			go func() {
				<-b.fake.arrived
				cancel()
			}()
			_, err := b.model.Complete(ctx, hi)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
		})
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	t.Parallel()
	f := newFake(t, "/v1/chat/completions", reply{status: 429, header: map[string]string{"Retry-After": "30"}, body: openAIRateLimited})
	ctx, cancel := context.WithCancel(t.Context())
	var waited time.Duration
	policy := fastBackoff
	policy.waiting = func(d time.Duration) { waited = d; cancel() }
	m, err := newModel(Config{Provider: ProviderOpenAI, Model: "m", BaseURL: f.srv.URL + "/v1"}, policy)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(ctx, hi)
	if !errors.Is(err, context.Canceled) || f.requests() != 1 {
		t.Fatalf("err = %v after %d requests, want context.Canceled after 1", err, f.requests())
	}
	if e := (*Error)(nil); !errors.As(err, &e) || e.StatusCode != 429 {
		t.Errorf("err = %v, want it to keep the 429", err)
	}
	if waited != 30*time.Second {
		t.Errorf("waited %v, want the server's Retry-After of 30s", waited)
	}
}

func TestConnectionErrorsAreRetried(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	m, err := newModel(Config{Provider: ProviderOpenAI, Model: "m", BaseURL: url + "/v1", MaxRetries: 2}, fastBackoff)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(t.Context(), hi)
	var e *Error
	if !errors.As(err, &e) || e.StatusCode != 0 || e.Attempts != 3 {
		t.Fatalf("err = %v, want a connection error after 3 attempts", err)
	}
	if !strings.Contains(err.Error(), url) {
		t.Errorf("error %q does not point at the server", err)
	}
}

func TestErrorsNeverContainTheKey(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-api03-very-secret"
	echo := `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: ` + key + `"}}`
	b := setup(t, ProviderAnthropic, Config{APIKey: key}, reply{status: 401, body: echo, header: map[string]string{"request-id": "req_1"}})
	_, err := b.model.Complete(t.Context(), hi)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if strings.Contains(msg, key) {
		t.Fatalf("error leaks the key: %s", msg)
	}
	for _, want := range []string{"401", "authentication_error", redacted, "req_1", "check " + EnvAnthropicKey} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

// The SDKs read ANTHROPIC_BASE_URL and OPENAI_BASE_URL themselves; Config
// must win, so a stray variable cannot send prompts elsewhere.
func TestEnvironmentDoesNotLeakIntoSDKs(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	for _, pc := range providerCases {
		b := setup(t, pc.provider, Config{}, reply{body: pc.ok})
		if _, err := b.model.Complete(t.Context(), hi); err != nil {
			t.Fatalf("%s: %v", pc.provider, err)
		}
		h := b.fake.header(0)
		if strings.Contains(h.Get("Authorization"), "sk-from-env") || h.Get("X-Api-Key") != "" || h.Get("OpenAI-Organization") != "" {
			t.Errorf("%s: environment leaked into headers %v", pc.provider, h)
		}
	}
}

func TestInvalidRequestIsNotSent(t *testing.T) {
	t.Parallel()
	b := setup(t, ProviderAnthropic, Config{}, reply{body: anthropicTextReply})
	_, err := b.model.Complete(t.Context(), Request{})
	if !errors.Is(err, ErrInvalidRequest) || b.fake.requests() != 0 {
		t.Errorf("err = %v after %d requests, want ErrInvalidRequest and nothing sent", err, b.fake.requests())
	}
}

func TestBackoffDelay(t *testing.T) {
	t.Parallel()
	noJitter := backoffPolicy{base: 500 * time.Millisecond, max: 8 * time.Second, jitter: func() float64 { return 0 }}
	fullJitter := noJitter
	fullJitter.jitter = func() float64 { return 0.999999 }
	for n, want := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		if got := noJitter.delay(n); got != want {
			t.Errorf("delay(%d) = %v, want %v", n, got, want)
		}
		if got := fullJitter.delay(n); got < want || got > 2*want {
			t.Errorf("jittered delay(%d) = %v, want within [%v, %v]", n, got, want, 2*want)
		}
	}
	if got := noJitter.delay(200); got != 4*time.Second {
		t.Errorf("delay(200) = %v, want the cap's lower half", got)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{nil, 0, false},
		{map[string]string{"Retry-After": "0"}, 0, true},
		{map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{map[string]string{"Retry-After": "-3"}, 0, true},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{"Retry-After": "2", "Retry-After-Ms": "250"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After": "Mon, 02 Jan 2006 15:04:05 GMT"}, 0, true}, // in the past
	} {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		got, ok := retryAfter(h)
		if got != tc.want || ok != tc.ok {
			t.Errorf("retryAfter(%v) = %v, %v; want %v, %v", tc.header, got, ok, tc.want, tc.ok)
		}
	}
}
