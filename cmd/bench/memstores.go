package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The memory store workloads (design §4.5): Claude Code's listing of a
// store of storeMemories memories, paged as its client pages it
// (view=basic, limit=100, every page walked), and the NDJSON export it
// pulls with (E1, full) and lists with (E2, view=basic). Each against a
// bare net/http handler writing the same bytes, in the same run.

const (
	storeRepo     = "acme/memstores" // its team space is the store
	storeMemories = 2000
	storePage     = 100
)

// storeFixture is what the store workloads send and compare with.
type storeFixture struct {
	host  string
	path  string   // the store's path, /v1/memory_stores/memstore_…
	pages []string // the request target of each listing page, in order
	// bodies the baseline serves: each page, the full and the basic export.
	pageBodies            [][]byte
	export, exportBasic   []byte
	pageBytes, exportSize int
}

// setupStoreFixture fills storeRepo's team space with storeMemories
// entries (raising the org's entry cap), resolves its store and walks the
// listing once for the cursors and the bodies.
func setupStoreFixture(host string) (*storeFixture, error) {
	if _, err := apiDo(host, benchKey, http.MethodPatch, "/v1/org", map[string]any{"max_entries": storeMemories + 500}, http.StatusOK); err != nil {
		return nil, fmt.Errorf("raise the entry cap: %w", err)
	}
	const batch = 500 // about 1 MB a request, under the body limit
	for start := 0; start < storeMemories; start += batch {
		entries := make(map[string]string, batch)
		for i := start; i < start+batch && i < storeMemories; i++ {
			entries[fmt.Sprintf("topics/%02d/memory-%04d.md", i%40, i)] = prose(uint64(10_000+i), entryBytes)
		}
		if _, err := httpDo(host, http.MethodPut, teamMemoryPath(storeRepo, false), map[string]any{"entries": entries}); err != nil {
			return nil, fmt.Errorf("store memories: %w", err)
		}
	}
	b, err := httpDo(host, http.MethodPost, "/v1/repos/"+storeRepo+"/team/memory_store", nil)
	if err != nil {
		return nil, err
	}
	var st struct{ Path string }
	if err := json.Unmarshal(b, &st); err != nil || st.Path == "" {
		return nil, fmt.Errorf("memory_store answered %.200s", b)
	}
	f := &storeFixture{host: host, path: st.Path}
	if err := f.walk(); err != nil {
		return nil, err
	}
	if f.export, err = httpDo(host, http.MethodGet, f.path+"/memories/export", nil); err != nil {
		return nil, err
	}
	if f.exportBasic, err = httpDo(host, http.MethodGet, f.path+"/memories/export?view=basic", nil); err != nil {
		return nil, err
	}
	if n := strings.Count(string(f.export), "\n"); n != storeMemories+2 {
		return nil, fmt.Errorf("the export has %d lines, want %d", n, storeMemories+2)
	}
	f.exportSize = len(f.export)
	return f, nil
}

// walk lists the store page by page as Claude Code's client does, keeping
// each page's request target and body.
func (f *storeFixture) walk() error {
	items := 0
	target := f.path + "/memories?view=basic&limit=" + strconv.Itoa(storePage)
	for {
		b, err := httpDo(f.host, http.MethodGet, target, nil)
		if err != nil {
			return err
		}
		var page struct {
			Data     []json.RawMessage `json:"data"`
			NextPage *string           `json:"next_page"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			return fmt.Errorf("list page: %w", err)
		}
		f.pages, f.pageBodies = append(f.pages, target), append(f.pageBodies, b)
		f.pageBytes += len(b)
		items += len(page.Data)
		if page.NextPage == nil || *page.NextPage == "" {
			break
		}
		target = f.path + "/memories?view=basic&limit=" + strconv.Itoa(storePage) + "&page=" + url.QueryEscape(*page.NextPage)
	}
	if items != storeMemories || len(f.pages) != storeMemories/storePage {
		return fmt.Errorf("the listing walked %d memories in %d pages, want %d in %d", items, len(f.pages), storeMemories, storeMemories/storePage)
	}
	return nil
}

// startStoreBare serves /page/<i>, /export and /export-basic: the same
// bytes as the store's, from memory, with the same content types.
func startStoreBare(f *storeFixture) (*bare, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	write := func(w http.ResponseWriter, ct string, b []byte) {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case strings.HasPrefix(p, "/page/"):
			i, err := strconv.Atoi(strings.TrimPrefix(p, "/page/"))
			if err != nil || i < 0 || i >= len(f.pageBodies) {
				http.NotFound(w, r)
				return
			}
			write(w, "application/json", f.pageBodies[i])
		case p == "/export":
			write(w, "application/x-ndjson", f.export)
		case p == "/export-basic":
			write(w, "application/x-ndjson", f.exportBasic)
		default:
			http.NotFound(w, r)
		}
	})
	b := &bare{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, addr: ln.Addr().String()}
	go b.srv.Serve(ln)
	return b, nil
}

// pageWalk returns a next func that walks the listing's pages in order,
// each worker from its own starting page: one call is one page.
func pageWalk(host string, targets []string) func(conn, seq int) call {
	reqs := make([][]byte, len(targets))
	for i, t := range targets {
		reqs[i] = request("GET", host, t, map[string]string{"Authorization": "Bearer " + benchKey}, nil)
	}
	return func(conn, seq int) call { return call{req: reqs[(conn+seq)%len(reqs)], want: 200} }
}

// runMemStores measures the store workloads on srv and their baselines.
func (b *bench) runMemStores(ctx context.Context, d *driver, srv server) error {
	f, err := setupStoreFixture(srv.addr())
	if err != nil {
		return err
	}
	bs, err := startStoreBare(f)
	if err != nil {
		return err
	}
	defer bs.close()
	b.rep.set(d.prefix+"store_list_page_kb", float64(f.pageBytes)/float64(len(f.pages))/1024)
	b.rep.set(d.prefix+"store_export_mb", float64(f.exportSize)/(1<<20))
	b.rep.set(d.prefix+"store_export_basic_kb", float64(len(f.exportBasic))/1024)
	spec := loopSpec{conns: b.opt.conns, warmup: b.opt.warmup, dur: b.opt.dur / 2}
	load := func(addr string, next func(conn, seq int) call) func() (loadResult, error) {
		return func() (loadResult, error) { return runHTTP(ctx, addr, spec, next) }
	}
	barePages := make([]string, len(f.pages))
	for i := range barePages {
		barePages[i] = "/page/" + strconv.Itoa(i)
	}
	get := func(host, target string) func(conn, seq int) call {
		return same(request("GET", host, target, map[string]string{"Authorization": "Bearer " + benchKey}, nil), 200)
	}
	cases := []struct {
		name, key  string
		ours, base func() (loadResult, error)
	}{
		{fmt.Sprintf("store list %d memories, pages of %d (view=basic)", storeMemories, storePage), "store_list_page",
			load(srv.addr(), pageWalk(srv.addr(), f.pages)), load(bs.addr, pageWalk(bs.addr, barePages))},
		{fmt.Sprintf("store NDJSON export E1 full, %d memories", storeMemories), "store_export_full",
			load(srv.addr(), get(srv.addr(), f.path+"/memories/export")), load(bs.addr, get(bs.addr, "/export"))},
		{fmt.Sprintf("store NDJSON export E2 view=basic, %d memories", storeMemories), "store_export_basic",
			load(srv.addr(), get(srv.addr(), f.path+"/memories/export?view=basic")), load(bs.addr, get(bs.addr, "/export-basic"))},
	}
	for _, c := range cases {
		if err := b.compareLoads(d, srv, c.name, c.key, c.ours, c.base, atLeast(0.50)); err != nil {
			return err
		}
	}
	return nil
}
