package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// gitleaksModule is the gitleaks CLI the scan is compared with: the
// version internal/secretscan links, installed as its README says, so with
// the stdlib regexp engine.
const gitleaksModule = "github.com/zricethezav/gitleaks/v8@v8.30.1"

// binaries are the programs the run needs; an empty path means it could
// not be built, and err says why.
type binaries struct {
	server, client, gitleaks       string
	serverErr, clientErr, leaksErr error
}

// moduleRoot returns the directory of the teammem go.mod above the working
// directory.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run the bench inside the teammem module")
	}
	return filepath.Dir(mod), nil
}

// buildAll builds the server with -tags gore2regex and the client without
// (as the README ships them: the client scans only what it pushes and starts
// faster on Go's own regexp engine), and installs
// the gitleaks CLI, in parallel, into dir. Binaries found in binDir (when
// set) are used as they are. gitleaksPath, when set, is used instead of
// installing.
func buildAll(ctx context.Context, root, dir, binDir, gitleaksPath string) binaries {
	var b binaries
	var wg sync.WaitGroup
	locate := func(name string) string {
		if binDir == "" {
			return ""
		}
		p := filepath.Join(binDir, name)
		if _, err := os.Stat(p); err != nil {
			return ""
		}
		return p
	}
	if b.server = locate("teammem-server"); b.server == "" {
		wg.Go(func() {
			b.server, b.serverErr = goBuild(ctx, root, "./cmd/server", filepath.Join(dir, "teammem-server"), "gore2regex")
		})
	}
	if b.client = locate("teammem"); b.client == "" {
		wg.Go(func() { b.client, b.clientErr = goBuild(ctx, root, "./cmd/client", filepath.Join(dir, "teammem"), "") })
	}
	if b.gitleaks = gitleaksPath; b.gitleaks == "" {
		wg.Go(func() { b.gitleaks, b.leaksErr = installGitleaks(ctx, dir) })
	}
	wg.Wait()
	return b
}

// goBuild builds pkg as the project ships it.
func goBuild(ctx context.Context, root, pkg, out, tags string) (string, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", tags, "-o", out, pkg)
	cmd.Dir = root
	// GOFLAGS (scripts/test sets -tags there) must not override the choice.
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
	}
	logf("built %s in %s", pkg, time.Since(start).Round(time.Millisecond))
	return out, nil
}

// installGitleaks runs go install of gitleaksModule with GOBIN=dir, outside
// the module and without GOFLAGS, so it builds as its users install it.
func installGitleaks(ctx context.Context, dir string) (string, error) {
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "install", gitleaksModule)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %v\n%s", gitleaksModule, err, msg)
	}
	logf("installed gitleaks in %s", time.Since(start).Round(time.Millisecond))
	return filepath.Join(dir, "gitleaks"), nil
}
