package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// api is the /v1 API as one viewer calls it.
type api struct {
	b Backend
	p teammem.Principal
}

func (c *Console) api(v *viewer) api { return api{b: c.cfg.Backend, p: v.p} }

// do sends in (JSON; nil for no body) and decodes a 2xx answer into out
// (nil: ignore it; *[]byte: the raw body). Any other answer is returned as
// the error its body describes.
func (a api) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	status, _, resp := a.b.Call(ctx, a.p, method, path, body)
	if status < 200 || status > 299 {
		// The Dreams and memory stores routes answer in Anthropic's envelope.
		var ae wire.AnthropicErrorBody
		if json.Unmarshal(resp, &ae) == nil && ae.Type == "error" && ae.Error.Type != "" {
			return ae.Error.Err()
		}
		var e wire.ErrorBody
		if json.Unmarshal(resp, &e) != nil || e.Error.Type == "" {
			return teammem.Errorf(teammem.EInternal, "the API answered %d", status)
		}
		return e.Error.Err()
	}
	switch o := out.(type) {
	case nil:
		return nil
	case *[]byte:
		*o = resp
		return nil
	default:
		return json.Unmarshal(resp, out)
	}
}

func (a api) get(ctx context.Context, path string, out any) error {
	return a.do(ctx, http.MethodGet, path, nil, out)
}

// spacePath is the /v1 path of a repo's team space. A repo is owner/name;
// the owner of a "host/owner/name" repo travels escaped, as the API wants.
func spacePath(repo string) string {
	i := strings.LastIndexByte(repo, '/')
	if i < 0 {
		return "/v1/repos/" + url.PathEscape(repo) + "/-/team" // not a valid slug: the API says so
	}
	return "/v1/repos/" + url.PathEscape(repo[:i]) + "/" + url.PathEscape(repo[i+1:]) + "/team"
}

// entryPath is the /v1 path of an entry of a repo's team space.
func entryPath(repo, key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return spacePath(repo) + "/entries/" + strings.Join(segs, "/")
}

// entryURL is the console page of an entry.
func entryURL(repo, key, extra string) string {
	return "/ui/entry?repo=" + url.QueryEscape(repo) + "&key=" + url.QueryEscape(key) + extra
}
