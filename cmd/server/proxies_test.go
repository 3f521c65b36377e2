package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestConfigTrustedProxiesAndPublicURL reads TEAMMEM_TRUSTED_PROXIES and
// TEAMMEM_PUBLIC_URL from the environment and the flags, and refuses each
// malformed value with a message naming the variable and the entry.
func TestConfigTrustedProxiesAndPublicURL(t *testing.T) {
	c := defaultConfig()
	if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_TRUSTED_PROXIES": " 10.0.0.0/8, 127.0.0.1,::1 ,fd00::/8,::ffff:192.0.2.1",
		"TEAMMEM_PUBLIC_URL": "https://teammem.example.com"})); err != nil {
		t.Fatal(err)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	ps, err := parseTrustedProxies(c.TrustedProxies)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.String())
	}
	if want := "10.0.0.0/8 127.0.0.1/32 ::1/128 fd00::/8 192.0.2.1/32"; strings.Join(got, " ") != want {
		t.Errorf("trusted proxies = %v, want %s", got, want)
	}
	if s := c.String(); !strings.Contains(s, "public_url=https://teammem.example.com") || !strings.Contains(s, "trusted_proxies=") {
		t.Errorf("String() = %s", s)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	c.bindFlags(fs)
	if err := fs.Parse([]string{"--public-url", "http://127.0.0.1:8080", "--trusted-proxies", "192.168.0.0/16"}); err != nil {
		t.Fatal(err)
	}
	if c.PublicURL != "http://127.0.0.1:8080" || c.TrustedProxies != "192.168.0.0/16" {
		t.Errorf("flags did not override: %q %q", c.PublicURL, c.TrustedProxies)
	}
	for _, name := range []string{"public-url", "trusted-proxies"} {
		if f := fs.Lookup(name); f == nil || !strings.Contains(f.Usage, "TEAMMEM_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))) {
			t.Errorf("--%s is missing or does not name its variable in --help", name)
		}
	}

	for _, tc := range []struct{ name, value, want string }{
		{"TEAMMEM_TRUSTED_PROXIES", "10.0.0.0/33", `"10.0.0.0/33" is not a CIDR`},
		{"TEAMMEM_TRUSTED_PROXIES", "10.0.0.1/8", `"10.0.0.1/8" is not a CIDR`},
		{"TEAMMEM_TRUSTED_PROXIES", "127.0.0.1, proxy.internal", `"proxy.internal" is not an IP address`},
		{"TEAMMEM_TRUSTED_PROXIES", "fe80::1%eth0", `"fe80::1%eth0" is not an IP address`},
		{"TEAMMEM_TRUSTED_PROXIES", "::ffff:0:0/90", `"::ffff:0:0/90" is not a CIDR`},
		{"TEAMMEM_PUBLIC_URL", "teammem.example.com", "want an http:// or https:// URL"},
		{"TEAMMEM_PUBLIC_URL", "ftp://teammem.example.com", "want an http:// or https:// URL"},
		{"TEAMMEM_PUBLIC_URL", "https://", "want a host"},
		{"TEAMMEM_PUBLIC_URL", "https://user:pw@teammem.example.com", "without credentials"},
		{"TEAMMEM_PUBLIC_URL", "https://teammem.example.com/?x=1", "without credentials, query or fragment"},
	} {
		c := defaultConfig()
		if err := c.loadEnv(envOf(map[string]string{tc.name: tc.value})); err != nil {
			t.Fatal(err)
		}
		err := c.validate()
		if err == nil || !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%q: validate = %v, want an error naming it with %q", tc.name, tc.value, err, tc.want)
		}
		if tc.name == "TEAMMEM_PUBLIC_URL" && strings.Contains(tc.value, "pw@") && strings.Contains(err.Error(), "pw") {
			t.Errorf("the error repeats the URL's password: %v", err)
		}
	}
}
