package httpapi_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/chromedp/chromedp"

	"github.com/teammem/teammem/internal/teammem"
)

// TestConsoleDreamsInBrowser drives the console's Dreams page in a real
// headless Chromium: the list, a dream's per-memory diff, Apply, a stale
// Apply's 409 naming the memories that changed, and Discard.
func TestConsoleDreamsInBrowser(t *testing.T) {
	chromiumPath(t) // skips before any setup without a browser
	e, _ := newDreamEnv(t, MustOpenStore(t))
	admin := e.keys[teammem.RoleAdmin]
	fresh := MustReviewDream(t, e, admin, reviewInput, reviewOutput)
	stale := MustReviewDream(t, e, admin, reviewInput, reviewOutput)
	c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(admin), option.WithMaxRetries(0))
	if _, err := c.Beta.MemoryStores.Memories.New(t.Context(), stale.InputStoreID, anthropic.BetaMemoryStoreMemoryNewParams{
		Path: "/late.md", Content: anthropic.String("written while the dream ran\n")}); err != nil {
		t.Fatal(err)
	}

	br := startBrowser(t)
	run, wantText, shot := br.run, br.wantText, br.shot

	run("sign in", chromedp.Navigate(e.url+"/ui/"), chromedp.WaitVisible(chromedp.CSS("#key")),
		chromedp.SendKeys(chromedp.CSS("#key"), admin), chromedp.Click(chromedp.CSS(`form[action="/ui/login"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`nav a[href="/ui/dreams"]`)))
	run("dreams", chromedp.Click(chromedp.CSS(`nav a[href="/ui/dreams"]`)), chromedp.WaitVisible(chromedp.CSS("#dreams")))
	wantText("list", "#dream-"+fresh.ID, "completed", "m1", "1200 / 340", "pending", "create_new")
	wantText("list", "#dreams", stale.ID)
	shot("dreams-01-list")

	// The diff, then Apply.
	run("open dream", chromedp.Click(chromedp.CSS(`#dream-`+fresh.ID+` a`)), chromedp.WaitVisible(chromedp.CSS("#diff")))
	wantText("diff", "#diff", "/deploy.md", "merged", "absorbed /tagging.md", "/tagging.md", "deleted", "/new.md", "added",
		"/ports.md", "rewritten", "port 9090", "port 8080")
	shot("dreams-02-diff")
	run("apply", chromedp.Click(chromedp.CSS("#apply")), chromedp.WaitVisible(chromedp.CSS(".flash")))
	wantText("applied", ".flash", "written into its input store")
	wantText("applied state", "#dream-review", "applied")
	if files := storeFiles(t, e, fresh.InputStoreID); !jsonEqual(files, reviewOutput) {
		t.Fatalf("input after the console's apply = %v", files)
	}
	shot("dreams-03-applied")

	// A stale Apply: the 409's memories, nothing written; then Discard.
	before := storeFiles(t, e, stale.InputStoreID)
	run("open stale", chromedp.Navigate(e.url+"/ui/dream?id="+stale.ID), chromedp.WaitVisible(chromedp.CSS("#apply")),
		chromedp.Click(chromedp.CSS("#apply")), chromedp.WaitVisible(chromedp.CSS("#stale")))
	wantText("stale", "#stale", "changed since the dream started", "/late.md", "Nothing was written")
	if after := storeFiles(t, e, stale.InputStoreID); !jsonEqual(after, before) {
		t.Fatalf("a stale apply wrote: %v", after)
	}
	shot("dreams-04-stale-apply")
	run("discard", chromedp.Click(chromedp.CSS("#discard")), chromedp.WaitVisible(chromedp.CSS(".flash")))
	wantText("discarded", ".flash", "discarded")
	wantText("discarded state", "#dream-review", "discarded")
	shot("dreams-05-discarded")
}
