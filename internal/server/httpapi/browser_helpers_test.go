package httpapi_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium a console test drives, with the steps
// every such test takes; it lives until the test ends (at most 90 s).
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

// startBrowser starts Chromium (skipping the test without one, see
// chromiumPath).
func startBrowser(t *testing.T) *browser {
	t.Helper()
	exe := chromiumPath(t)
	b := &browser{t: t, shots: screenshotDir(t)}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser, which lives as long as ctx
		t.Fatalf("start Chromium: %v", err)
	}
	b.ctx = ctx
	return b
}

// run does one step's actions within 20 s, failing with the page's text.
func (b *browser) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.innerText`))
		b.t.Fatalf("%s: %v; the page:\n%s", step, err, body)
	}
}

// shot writes a PNG of the whole page to the screenshot directory.
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
}

// text is the text of the element sel names.
func (b *browser) text(step, sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
	return s
}

// wantText fails unless sel's text holds every one of wants.
func (b *browser) wantText(step, sel string, wants ...string) {
	b.t.Helper()
	got := b.text(step, sel)
	for _, w := range wants {
		if !strings.Contains(got, w) {
			b.t.Fatalf("%s: %s shows %q, want it to contain %q", step, sel, got, w)
		}
	}
}
