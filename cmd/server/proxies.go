package main

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// validPublicURL checks TEAMMEM_PUBLIC_URL: empty, or an absolute http or
// https URL with a host and nothing after the path (the console builds on
// its origin; a query, fragment or password in it is a mistake).
func validPublicURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("want an http:// or https:// URL")
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("want a host, as in https://teammem.example.com")
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("want scheme://host[:port][/path], without credentials, query or fragment")
	}
	return nil
}

// redactURL is v for messages and logs, its password (if any) replaced.
func redactURL(v string) string {
	if u, err := url.Parse(v); err == nil {
		return u.Redacted()
	}
	return "(not a URL)"
}

// parseTrustedProxies reads TEAMMEM_TRUSTED_PROXIES: comma-separated CIDRs
// (10.0.0.0/8, fd00::/8) or single addresses (127.0.0.1, ::1). An entry
// with host bits set below its mask (10.0.0.1/8) is refused as a likely
// typo, and so is any entry that is not an address.
func parseTrustedProxies(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	var bad []string
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil || p != p.Masked() || p.Addr().Is4In6() && p.Bits() < 96 {
				bad = append(bad, fmt.Sprintf("%q is not a CIDR like 10.0.0.0/8", f))
				continue
			}
			out = append(out, netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapBits(p.Addr())))
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil || a.Zone() != "" {
			bad = append(bad, fmt.Sprintf("%q is not an IP address or CIDR", f))
			continue
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(bad, "; "))
	}
	return out, nil
}

// unmapBits is the bits an IPv4-mapped IPv6 prefix loses when it is
// written as IPv4 (96), else 0.
func unmapBits(a netip.Addr) int {
	if a.Is4In6() {
		return 96
	}
	return 0
}
