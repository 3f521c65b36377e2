package httpapi

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// keyRoutes routes the paths under a space's /entries/. An entry key spans
// any number of path segments (notes/build.md travels unescaped), and chi
// can follow a wildcard with nothing, so "/entries/{key}/history" is not a
// chi pattern. keyRoutes matches each route's fixed tail from the end of the
// path instead and takes everything before it as the key, so a key may
// itself hold such segments. Its routes are listed in routes.go like any
// other, and it is a chi.Routes, so that the route walk (the spec test, the
// metrics labels), Match (the Allow header of a 405) and Find see them.
//
// Pattern "/*" is the whole path as the key (chi's catch-all, so the entry
// routes keep the metrics label ".../entries/*"); "/{key}/a/{b}/c" is a key
// followed by the segments a, any one segment b and c. The first route of
// the request's method that matches wins, so tails go before "/*".
type keyRoutes struct {
	routes []keyRoute
	// notFound answers a method that has routes here but none matching
	// (a POST to a plain entry path): the API's 404, not a 405.
	notFound http.Handler
	// methodNotAllowed answers a method with no route here at all.
	methodNotAllowed http.Handler
}

// keyRoute is one method and pattern of keyRoutes.
type keyRoute struct {
	method  string
	pattern string
	tail    []string // the segments after {key}; nil for "/*"
	h       http.Handler
}

// keyParam names the URL parameter holding the still escaped key.
const keyParam = "key"

func (k *keyRoutes) add(method, pattern string, h http.Handler) {
	kr := keyRoute{method: method, pattern: pattern, h: h}
	if pattern != "/*" {
		rest, ok := strings.CutPrefix(pattern, "/{"+keyParam+"}/")
		if !ok {
			panic("keyRoutes: pattern " + pattern + " is neither /* nor /{key}/...")
		}
		kr.tail = strings.Split(rest, "/")
	}
	k.routes = append(k.routes, kr)
}

// Get, Put, Delete and Post add a route.
func (k *keyRoutes) Get(pattern string, h http.HandlerFunc)    { k.add(http.MethodGet, pattern, h) }
func (k *keyRoutes) Put(pattern string, h http.HandlerFunc)    { k.add(http.MethodPut, pattern, h) }
func (k *keyRoutes) Delete(pattern string, h http.HandlerFunc) { k.add(http.MethodDelete, pattern, h) }
func (k *keyRoutes) Post(pattern string, h http.HandlerFunc)   { k.add(http.MethodPost, pattern, h) }

// match finds the route of method for path (what follows "/entries",
// starting with "/") and the URL parameters it binds. served reports
// whether method has any route here.
func (k *keyRoutes) match(method, path string) (kr *keyRoute, params map[string]string, served bool) {
	raw := strings.TrimPrefix(path, "/")
	for i := range k.routes {
		r := &k.routes[i]
		if r.method != method {
			continue
		}
		served = true
		if p, ok := r.bind(raw); ok {
			return r, p, true
		}
	}
	return nil, nil, served
}

// bind matches raw, the path after "/entries/", against r's pattern, from
// the end: the tail's segments, then whatever is left as the key.
func (r *keyRoute) bind(raw string) (map[string]string, bool) {
	params := map[string]string{}
	rest := raw
	for i := len(r.tail) - 1; i >= 0; i-- {
		j := strings.LastIndexByte(rest, '/')
		if j < 0 {
			return nil, false
		}
		seg := rest[j+1:]
		switch want := r.tail[i]; {
		case strings.HasPrefix(want, "{"):
			if seg == "" {
				return nil, false
			}
			params[strings.Trim(want, "{}")] = seg
		case seg != want:
			return nil, false
		}
		rest = rest[:j]
	}
	params[keyParam] = rest
	return params, true
}

func (k *keyRoutes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rctx := chi.RouteContext(r.Context())
	kr, params, served := k.match(rctx.RouteMethod, rctx.RoutePath)
	switch {
	case kr != nil:
		rctx.RoutePatterns = append(rctx.RoutePatterns, kr.pattern)
		for name, v := range params {
			rctx.URLParams.Add(name, v)
		}
		kr.h.ServeHTTP(w, r)
	case served:
		rctx.RoutePatterns = append(rctx.RoutePatterns, "/*")
		k.notFound.ServeHTTP(w, r)
	default:
		// No route, as chi says of a 405: the mount's "/entries/*" comes
		// off the pattern, so the request counts as unmatched.
		if n := len(rctx.RoutePatterns); n > 0 {
			rctx.RoutePatterns = rctx.RoutePatterns[:n-1]
		}
		k.methodNotAllowed.ServeHTTP(w, r)
	}
}

// Routes implements chi.Routes: every route, for chi.Walk.
func (k *keyRoutes) Routes() []chi.Route {
	var out []chi.Route
	at := map[string]int{}
	for _, kr := range k.routes {
		i, ok := at[kr.pattern]
		if !ok {
			i = len(out)
			at[kr.pattern] = i
			out = append(out, chi.Route{Pattern: kr.pattern, Handlers: map[string]http.Handler{}})
		}
		out[i].Handlers[kr.method] = kr.h
	}
	return out
}

// Middlewares implements chi.Routes: keyRoutes has none of its own.
func (k *keyRoutes) Middlewares() chi.Middlewares { return nil }

// Match implements chi.Routes. A method with routes here is routed on any
// path (a path none of them matches is the API's 404), as chi routes a
// wildcard.
func (k *keyRoutes) Match(rctx *chi.Context, method, path string) bool {
	return k.Find(rctx, method, path) != ""
}

// Find implements chi.Routes: the pattern the request would be routed by.
func (k *keyRoutes) Find(rctx *chi.Context, method, path string) string {
	kr, params, served := k.match(method, path)
	switch {
	case kr != nil:
		for name, v := range params {
			rctx.URLParams.Add(name, v)
		}
		return kr.pattern
	case served:
		return "/*"
	}
	return ""
}
