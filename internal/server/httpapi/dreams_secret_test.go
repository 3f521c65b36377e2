package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/secrettest"
)

// TestDreamInstructionsSecret: instructions holding a secret are refused
// with a 400 that names the rule and never the secret, and no dream is
// stored or enqueued; clean instructions still create one. Both drivers,
// through the official Go SDK.
func TestDreamInstructionsSecret(t *testing.T) {
	samples := []secrettest.Sample{
		{RuleID: "github-pat", Text: "push with " + secrettest.Token("github-pat") + " when done"},
		{RuleID: "aws-access-token", Text: "the bucket key is " + secrettest.Token("aws-access-token")},
	}
	samples = append(samples, secrettest.TruePositives()[:3]...)
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		runner := &fakeRunner{models: []string{"m1"}}
		e := newV1Env(t, st, nil)
		sc, err := secretscan.New()
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig()
		cfg.Dreams = runner
		ts := httptest.NewServer(httpapi.New(st, secretscan.NewOrgScanner(sc), cfg, nil, nil).Handler())
		t.Cleanup(ts.Close)
		e.url = ts.URL
		ctx := t.Context()
		c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(e.keys[teammem.RoleOwner]), option.WithMaxRetries(0))
		store, err := c.Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "notes"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range samples {
			p := dreamOnly(store.ID, false)
			p.Instructions = anthropic.String(s.Text)
			_, err := c.Beta.Dreams.New(ctx, p)
			apiErr := wantAPIError(t, err, http.StatusBadRequest, "invalid_request_error")
			body := apiErr.RawJSON()
			if !strings.Contains(body, "(rules: ") || !strings.Contains(body, s.RuleID) || strings.Contains(body, s.Text) {
				t.Fatalf("%s: refusal %s", s.Where, body)
			}
			for _, line := range strings.Split(s.Text, "\n") {
				if tok := strings.TrimSpace(line); len(tok) > 12 && strings.Contains(body, tok) {
					t.Fatalf("%s: the refusal echoes %q", s.Where, tok)
				}
			}
		}
		list, err := c.Beta.Dreams.List(ctx, anthropic.BetaDreamListParams{})
		if err != nil || len(list.Data) != 0 || len(runner.queued) != 0 {
			t.Fatalf("refused creates left dreams %v (err %v), enqueued %v", list.Data, err, runner.queued)
		}
		p := dreamOnly(store.ID, false)
		p.Instructions = anthropic.String("merge duplicates, keep decisions")
		if d, err := c.Beta.Dreams.New(ctx, p); err != nil || d.Instructions != "merge duplicates, keep decisions" {
			t.Fatalf("clean instructions: %v", err)
		}
	})
}
