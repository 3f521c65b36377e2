package secretscan

import (
	"encoding/json"
	"testing"
)

func TestLabel(t *testing.T) {
	// The 36 rules of the reference scanner and the labels it shows, in its
	// rule order.
	tests := []struct{ id, want string }{
		{"aws-access-token", "AWS Access Token"},
		{"gcp-api-key", "GCP API Key"},
		{"azure-ad-client-secret", "Azure AD Client Secret"},
		{"digitalocean-pat", "DigitalOcean PAT"},
		{"digitalocean-access-token", "DigitalOcean Access Token"},
		{"anthropic-api-key", "Anthropic API Key"},
		{"anthropic-admin-api-key", "Anthropic Admin API Key"},
		{"openai-api-key", "OpenAI API Key"},
		{"huggingface-access-token", "HuggingFace Access Token"},
		{"github-pat", "GitHub PAT"},
		{"github-fine-grained-pat", "GitHub Fine Grained PAT"},
		{"github-app-token", "GitHub App Token"},
		{"github-oauth", "GitHub OAuth"},
		{"github-refresh-token", "GitHub Refresh Token"},
		{"gitlab-pat", "GitLab PAT"},
		{"gitlab-deploy-token", "GitLab Deploy Token"},
		{"slack-bot-token", "Slack Bot Token"},
		{"slack-user-token", "Slack User Token"},
		{"slack-app-token", "Slack App Token"},
		{"twilio-api-key", "Twilio API Key"},
		{"sendgrid-api-token", "SendGrid API Token"},
		{"npm-access-token", "NPM Access Token"},
		{"pypi-upload-token", "PyPI Upload Token"},
		{"databricks-api-token", "Databricks API Token"},
		{"hashicorp-tf-api-token", "HashiCorp TF API Token"},
		{"pulumi-api-token", "Pulumi API Token"},
		{"postman-api-token", "Postman API Token"},
		{"grafana-api-key", "Grafana API Key"},
		{"grafana-cloud-api-token", "Grafana Cloud API Token"},
		{"grafana-service-account-token", "Grafana Service Account Token"},
		{"sentry-user-token", "Sentry User Token"},
		{"sentry-org-token", "Sentry Org Token"},
		{"stripe-access-token", "Stripe Access Token"},
		{"shopify-access-token", "Shopify Access Token"},
		{"shopify-shared-secret", "Shopify Shared Secret"},
		{"private-key", "Private Key"},
	}
	if len(tests) != 36 {
		t.Fatalf("%d labels, want the reference's 36", len(tests))
	}
	for _, tt := range tests {
		if got := Label(tt.id); got != tt.want {
			t.Errorf("Label(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestLabelEdges(t *testing.T) {
	// Rules outside the reference set fall back to capitalisation.
	tests := []struct{ id, want string }{
		{"1password-secret-key", "1password Secret Key"},
		{"jwt", "JWT"},
		{"generic-api-key", "Generic API Key"},
		{"", ""},
		{"a--b", "A  B"},
		{"émoji-key", "Émoji Key"},
	}
	for _, tt := range tests {
		if got := Label(tt.id); got != tt.want {
			t.Errorf("Label(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestFindingWire(t *testing.T) {
	f := Finding{RuleID: "github-pat", Label: "GitHub PAT", Line: 3}
	if got, want := f.String(), "GitHub PAT (github-pat) on line 3"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), `{"ruleId":"github-pat","label":"GitHub PAT","line":3}`; got != want {
		t.Errorf("JSON = %s, want %s", got, want)
	}
}
