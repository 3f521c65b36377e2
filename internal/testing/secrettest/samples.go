package secrettest

// truePositives are written the way secrets end up in memory files: pasted into a note about
// setting something up, an env line, a command. Multi-line ones come last.
var truePositives = []template{
	{"anthropic-api-key", "Set ANTHROPIC_API_KEY=sk-ant-api03-{b64url:93}AA before running the evals."},
	{"anthropic-admin-api-key", "The usage report uses the admin key sk-ant-admin01-{b64url:93}AA (org owner only)."},
	{"openai-api-key", `OPENAI_API_KEY="sk-proj-{alnum:74}T3BlbkFJ{alnum:74}"`},
	{"aws-access-token", "aws_access_key_id = AKIA{base32:16}"},
	{"gcp-api-key", "Maps embed key for the staging site: AIza{b64url:35}"},
	{"github-pat", "git remote set-url origin https://x-access-token:ghp_{alnum:36}@github.com/acme/widgets.git"},
	{"github-fine-grained-pat", "GH_TOKEN=github_pat_{word:82}"},
	{"github-oauth", "`gh auth token` printed gho_{alnum:36} on the build box"},
	{"github-app-token", "installation token for the release bot: ghs_{alnum:36}"},
	{"gitlab-pat", "GITLAB_TOKEN=glpat-{b64url:20}"},
	{"slack-bot-token", "SLACK_BOT_TOKEN=xoxb-{digit:12}-{digit:13}-{alnum:24}"},
	{"slack-user-token", "my Slack user token for the export script: xoxp-{digit:11}-{digit:12}-{digit:13}-{hex:32}"},
	{"slack-app-token", "socket mode needs SLACK_APP_TOKEN=xapp-1-A{uppernum:10}-{digit:13}-{hex:64}"},
	{"slack-webhook-url", "Deploy notifications go to https://hooks.slack.com/services/T{uppernum:8}/B{uppernum:10}/{alnum:24}"},
	{"stripe-access-token", "STRIPE_SECRET_KEY=sk_live_{alnum:24}"},
	{"huggingface-access-token", "HF_TOKEN=hf_{alpha:34}"},
	{"hashicorp-tf-api-token", `token = "{lowernum:14}.atlasv1.{b64url:67}"`},
	{"databricks-api-token", "DATABRICKS_TOKEN=dapi{hex:32}"},
	{"digitalocean-pat", "doctl auth init -t dop_v1_{hex:64}"},
	{"npm-access-token", "//registry.npmjs.org/:_authToken=npm_{alnum:36}"},
	{"pypi-upload-token", "password = pypi-AgEIcHlwaS5vcmc{b64url:70}"},
	{"sendgrid-api-token", "SENDGRID_API_KEY=SG.{b64url:22}.{b64url:43}"},
	{"twilio-api-key", "Twilio API key SK{hex:32} (the secret is in 1Password)"},
	{"shopify-access-token", "Shopify admin token: shpat_{hex:32}"},
	{"postman-api-token", "POSTMAN_API_KEY=PMAK-{hex:24}-{hex:34}"},
	{"grafana-service-account-token", "GRAFANA_TOKEN=glsa_{alnum:32}_{hex:8}"},
	{"linear-api-key", "LINEAR_API_KEY=lin_api_{alnum:40}"},
	{"doppler-api-token", "DOPPLER_TOKEN=dp.pt.{alnum:43}"},
	{"age-secret-key", "backup key: AGE-SECRET-KEY-1{bech32:58}"},
	{"heroku-api-key-v2", "HEROKU_API_KEY=HRKU-AA{b64url:57}x"},
	{"sentry-user-token", "SENTRY_AUTH_TOKEN=sntryu_{hex:64}"},
	{"notion-api-token", "NOTION_TOKEN=ntn_{digit:11}{alnum:35}"},
	{"jwt", "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{alnum:60}.{b64url:42}Q"},
	{"generic-api-key", `internal_service_secret = "{alnum:32}"`},
	{"azure-ad-client-secret", "client_secret={alnum:3}{digit:1}Q~{alnum:34}"},
	{"1password-service-account-token", "export OP_SERVICE_ACCOUNT_TOKEN=ops_eyJ{b64:260}"},
	{"curl-auth-user", "curl -u admin:{alnum:16} https://ci.acme.invalid/api/json"},
	{"curl-auth-header", `curl -H "X-Api-Key: {alnum:32}" https://status.acme.invalid/api/v2/incidents`},
	// Multi-line.
	{"private-key", "The deploy key for the staging box:\n-----BEGIN RSA PRIVATE KEY-----\n" +
		"MIIEowIBAAKCAQEA{b64:48}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:64}\n{b64:32}==\n-----END RSA PRIVATE KEY-----\n"},
	{"private-key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n" +
		"{b64:70}\n{b64:70}\n{b64:70}\n{b64:20}=\n-----END OPENSSH PRIVATE KEY-----"},
	{"private-key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC{b64:32}\n{b64:64}\n{b64:64}\n{b64:40}\n-----END PRIVATE KEY-----"},
	{"curl-auth-header", "To trigger a deploy by hand:\n\n    curl -X POST https://deploy.acme.invalid/v1/deploys \\\n" +
		"      -H \"Content-Type: application/json\" \\\n      -H \"Authorization: Bearer {alnum:40}\" \\\n" +
		"      -d '{\"ref\":\"main\"}'\n"},
	{"curl-auth-user", "curl -s \\\n  --user 'deploy:{alnum:20}' \\\n  https://artifacts.acme.invalid/upload"},
}

// falsePositives look like secrets, or sit where secrets go, but are not: placeholders,
// documentation examples, references to where the secret really lives, public keys.
var falsePositives = []template{
	{"aws-access-token", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE  # the example from AWS's docs"},
	{"github-pat", "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},
	{"github-pat", "tokens start with ghp_ and are 40 characters long"},
	{"generic-api-key", "api_key = os.environ"},
	{"generic-api-key", "token: ${{ secrets.DEPLOY_TOKEN }}"},
	{"generic-api-key", `password = "changeme"`},
	{"generic-api-key", "MAX_TOKENS = 4096"},
	{"generic-api-key", "the access token lives in 1Password under 'CI deploy'"},
	{"slack-webhook-url", "https://hooks.slack.com/services/T000/B000/XXXX"},
	{"private-key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A{b64:32}\n{b64:64}\n{b64:64}\n-----END PUBLIC KEY-----"},
	{"private-key", "-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----"},
	{"jwt", "JWTs start with eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9, the encoded header"},
	{"anthropic-api-key", "ANTHROPIC_API_KEY=sk-ant-api03-..."},
	{"openai-api-key", "OPENAI_API_KEY=sk-proj-{alnum:20}"},
	{"stripe-access-token", "STRIPE_PUBLISHABLE_KEY=pk_live_{alnum:24}"},
	{"curl-auth-header", `curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user`},
	{"gcp-api-key", "AIzaSyXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"},
}

// tokens are bare tokens, each the whole text. Rules that end a token with a
// boundary class (npm, gcp, databricks) are here for the tests of what
// counts as a boundary; github-pat and aws-access-token for the rest.
var tokens = []template{
	{"github-pat", "ghp_{alnum:36}"},
	{"aws-access-token", "AKIA{base32:16}"},
	{"npm-access-token", "npm_{alnum:36}"},
	{"gcp-api-key", "AIza{b64url:35}"},
	{"databricks-api-token", "dapi{hex:32}"},
}
