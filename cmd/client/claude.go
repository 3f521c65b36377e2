package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/claudeproxy"
	"github.com/teammem/teammem/internal/teammem"
)

// nativeOptions are the flags `teammem claude` and `teammem proxy` share.
type nativeOptions struct {
	noPersonal bool // keep the personal scope on teammem's own sync
	migrate    bool
	noMigrate  bool
	legacy     bool // also serve TEAM_MEMORY_SYNC_URL (Claude Code ≤2.1.206)
	// proxyRuns: --print-env for a running teammem proxy, which checks
	// team/ itself when a session first uses it; nothing is handed over
	// here, so the memory dir's state refuses nothing.
	proxyRuns bool
}

func (o *nativeOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.noPersonal, "no-personal", false, "leave the personal memory to teammem's own sync; only the team store is synced natively")
	f.BoolVar(&o.migrate, "migrate", false, "sync team/ once more with teammem's own sync, then move its files into team/"+teamMount+"/")
	f.BoolVar(&o.noMigrate, "no-migrate", false, "start although team/ holds files of teammem's own sync (the model sees them twice)")
	f.BoolVar(&o.legacy, "legacy", false, "also set TEAM_MEMORY_SYNC_URL, for Claude Code 2.1.206 and earlier")
}

// nativeSession is a memory dir set up for Claude Code's own sync.
type nativeSession struct {
	sync             *syncEnv
	rec              nativeRecord // as loaded, before any hand-over
	o                nativeOptions
	server, key      string
	team, personal   *apiclient.MemoryStore
	ca               *claudeproxy.CA
	needsPlaceholder bool
}

// resolveNative checks the memory dir, resolves the stores and loads the
// local CA. It changes nothing local: the hand-over is handOver's.
func (a *app) resolveNative(ctx context.Context, o nativeOptions) (*nativeSession, error) {
	if o.migrate && o.noMigrate {
		return nil, &usageError{errors.New("--migrate and --no-migrate exclude each other")}
	}
	env, err := a.newSyncEnv()
	if err != nil {
		return nil, err
	}
	rec, err := a.loadNative(env.loc)
	if err != nil {
		return nil, err
	}
	stray, err := teamFilesOutside(env.loc.MemoryDir)
	if err != nil {
		return nil, err
	}
	if len(stray) > 0 && !o.migrate && !o.noMigrate && !o.proxyRuns {
		return nil, migrateRefusal(stray)
	}
	// The stores first: a server that cannot name them changes nothing here.
	ns := &nativeSession{sync: env, rec: rec, o: o, server: env.engine.Client.BaseURL, key: env.engine.Client.Key}
	team, err := env.engine.Client.MemoryStore(ctx, teammem.ScopeTeam)
	if err != nil {
		return nil, explain("resolve the team memory store: "+apiclient.FailureOf(err).Message, err)
	}
	ns.team = &team
	if !o.noPersonal {
		personal, err := env.engine.Client.MemoryStore(ctx, teammem.ScopePersonal)
		if err != nil {
			return nil, explain("resolve the personal memory store: "+apiclient.FailureOf(err).Message, err)
		}
		ns.personal = &personal
	}
	cfg, err := a.configDir()
	if err != nil {
		return nil, err
	}
	if ns.ca, err = claudeproxy.LoadCA(filepath.Join(cfg, "teammem", "proxy"), claudeproxy.InterceptHosts(nil)); err != nil {
		return nil, err
	}
	home := a.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	ns.needsPlaceholder = !claudeLogin(a.getenv, home)
	return ns, nil
}

// handOver hands the session's scopes from teammem's own sync to Claude
// Code's: teammem's sync runs once more for each scope it kept before, so
// that the server holds every local edit when Claude Code pulls (its first
// pull overwrites a differing local file); with --migrate the files of
// team/ then move into the mount, those that last sync pulled included;
// then the record says which scopes are native.
func (a *app) handOver(ctx context.Context, ns *nativeSession) error {
	loc, o := ns.sync.loc, ns.o
	stray, err := teamFilesOutside(loc.MemoryDir)
	if err != nil {
		return err
	}
	if len(stray) > 0 && !o.migrate && !o.noMigrate {
		return migrateRefusal(stray) // appeared since resolveNative
	}
	handover := []teammem.Scope{teammem.ScopeTeam}
	if !o.noPersonal {
		handover = append(handover, teammem.ScopePersonal)
	}
	for _, s := range handover {
		if ns.rec.store(s) != nil || (s == teammem.ScopeTeam && len(stray) == 0) {
			continue
		}
		if _, err := ns.sync.engine.Sync(ctx, s, true, true); err != nil {
			return explain(fmt.Sprintf("teammem's own %s sync before handing over to Claude Code failed: %v", s, err), err)
		}
	}
	if o.migrate {
		// Listed again: the sync above may have pulled more into team/.
		if stray, err = teamFilesOutside(loc.MemoryDir); err != nil {
			return err
		}
		if len(stray) > 0 {
			moved, err := migrateTeam(loc.MemoryDir, stray)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "teammem: moved %d file(s) from team/ into team/%s/\n", len(moved), teamMount)
		}
	}
	return a.saveNative(loc, nativeRecord{Server: ns.server, Repo: ns.sync.repo, Team: ns.team, Personal: ns.personal})
}

// env returns the session's variables for a proxy at addr with the run's
// secret.
func (ns *nativeSession) env(a *app, addr, secret string) [][2]string {
	return claudeEnv(claudeEnvParams{ProxyAddr: addr, Secret: secret, CACert: ns.ca.CertPath, Team: ns.team, Personal: ns.personal,
		NeedsPlaceholder: ns.needsPlaceholder, Legacy: ns.o.legacy, NoProxy: first(a.getenv("NO_PROXY"), a.getenv("no_proxy"))})
}

// startProxy listens on addr (127.0.0.1:0 for any port) and serves the
// proxy for the session's stores under a fresh secret, which it returns.
// beforeTeammem, when set, runs before the first request for teammem.
func (a *app) startProxy(ns *nativeSession, addr string, beforeTeammem func(context.Context) error) (*claudeproxy.Proxy, net.Addr, string, error) {
	secret, err := claudeproxy.NewSecret()
	if err != nil {
		return nil, nil, "", err
	}
	cfg := claudeproxy.Config{CA: ns.ca, Server: ns.server, Key: ns.key, Secret: secret, Legacy: ns.o.legacy,
		Upstream: a.getenv("TEAMMEM_PROXY_UPSTREAM"), LoopbackOnly: a.getenv("TEAMMEM_PROXY_LOOPBACK_ONLY") == "1",
		Warn: func(msg string) { fmt.Fprintln(a.stderr, msg) }, BeforeTeammem: beforeTeammem}
	for _, ms := range []*apiclient.MemoryStore{ns.team, ns.personal} {
		if ms != nil {
			cfg.StorePaths = append(cfg.StorePaths, ms.Path)
		}
	}
	if logPath := a.getenv("TEAMMEM_PROXY_LOG"); logPath != "" {
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, "", fmt.Errorf("TEAMMEM_PROXY_LOG: %w", err)
		}
		cfg.Log = func(r claudeproxy.Routed) { fmt.Fprintln(f, r.String()) }
	}
	// An address literal that is not loopback is refused before anything
	// listens: even a moment on every interface is too long.
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); host == "" || (ip != nil && !ip.IsLoopback()) {
			return nil, nil, "", &usageError{fmt.Errorf("the proxy listens on loopback only, not %s", addr)}
		}
	}
	p, err := claudeproxy.New(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, "", fmt.Errorf("proxy listen: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, nil, "", &usageError{fmt.Errorf("the proxy listens on loopback only, not %s (%s)", addr, ln.Addr())}
	}
	go p.Serve(ln) //nolint:errcheck // ends with Close
	return p, ln.Addr(), secret, nil
}

// childExit carries the exit status of the claude process to main.
type childExit struct{ code int }

func (e *childExit) Error() string { return fmt.Sprintf("claude exited with status %d", e.code) }

func (a *app) claudeCmd() *cobra.Command {
	var o nativeOptions
	var printEnv bool
	var proxyAddr string
	cmd := &cobra.Command{
		Use:   "claude [flags] [-- claude args]",
		Short: "Run stock Claude Code with its native memory sync pointed at teammem",
		Long: "Runs claude (TEAMMEM_CLAUDE_BIN, else from PATH) with Claude Code's own memory-store sync (2.1.212+)\n" +
			"pointed at teammem: the repo's team store mounts at team/" + teamMount + "/, your personal store at the\n" +
			"memory dir. A loopback proxy in this process terminates api.anthropic.com with a local CA only this\n" +
			"claude trusts, sends the store calls to teammem with your teammem key and passes everything else\n" +
			"through unchanged. teammem's own sync leaves the handed-over scopes alone from now on.\n\n" +
			"Before the first native session teammem syncs those scopes once more, so the server holds every local\n" +
			"edit. It stops if team/ holds files of its own sync (they would be read twice): --migrate moves them\n" +
			"(and what that last sync pulled) into team/" + teamMount + "/, --no-migrate starts anyway.\n\n" +
			"Only this claude gets the proxy's per-run credentials (in HTTPS_PROXY, and with --legacy in\n" +
			"TEAM_MEMORY_SYNC_URL); the proxy refuses every request without them. The exit status is claude's;\n" +
			"teammem's own refusals exit " + fmt.Sprint(exitState) + " (the memory dir's state: files to migrate or to merge by hand).\n\n" +
			"--print-env changes nothing: it prints the variables of the teammem proxy running at --proxy-addr\n" +
			"(with its credentials); that proxy hands the scopes over when a session first uses it.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var run proxyRun
			var noProxy error
			if printEnv {
				// The variables are the running proxy's: the stores it serves.
				run, noProxy = a.runningProxy(proxyAddr, o.legacy)
				o.proxyRuns = noProxy == nil
				o.noPersonal = o.noPersonal || run.NoPersonal
			}
			ns, err := a.resolveNative(cmd.Context(), o)
			if err != nil {
				return err
			}
			if printEnv {
				if noProxy != nil {
					return noProxy
				}
				return a.printEnv(ns.env(a, proxyAddr, run.Secret))
			}
			if err := a.handOver(cmd.Context(), ns); err != nil {
				return err
			}
			return a.runClaude(ns, args)
		},
	}
	o.flags(cmd)
	cmd.Flags().BoolVar(&printEnv, "print-env", false, "print the variables (sh export lines) of the teammem proxy running at --proxy-addr instead of running claude")
	cmd.Flags().StringVar(&proxyAddr, "proxy-addr", defaultProxyAddr, "with --print-env: where teammem proxy listens")
	return cmd
}

// runClaude serves the proxy and runs claude under it, forwarding signals.
func (a *app) runClaude(ns *nativeSession, args []string) error {
	bin := a.getenv("TEAMMEM_CLAUDE_BIN")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("claude"); err != nil {
			return errors.New("claude not found on PATH; install Claude Code or set TEAMMEM_CLAUDE_BIN")
		}
	}
	p, addr, secret, err := a.startProxy(ns, "127.0.0.1:0", nil)
	if err != nil {
		return err
	}
	defer p.Close()
	child := exec.Command(bin, args...)
	child.Env = mergeEnv(os.Environ(), ns.env(a, addr.String(), secret))
	child.Stdin, child.Stdout, child.Stderr = a.stdin, a.stdout, a.stderr
	// A terminal's Ctrl-C reaches claude by itself (same process group);
	// forwarding it again would count as a second press. Signals sent to
	// teammem alone are passed on.
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}
	if f, ok := a.stdin.(*os.File); !ok || !isTerminal(f) {
		sigs = append(sigs, os.Interrupt)
	}
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, sigs...)
	defer signal.Stop(ch)
	if err := child.Start(); err != nil {
		return fmt.Errorf("start claude: %w", err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				_ = child.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err = child.Wait()
	close(done)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return &childExit{code: code}
	}
	return err
}

// printEnv prints vars as sh export lines.
func (a *app) printEnv(vars [][2]string) error {
	// One write: a reader of the output (a shell's eval, a test) never sees
	// half the variables.
	var b strings.Builder
	for _, kv := range vars {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
	_, err := io.WriteString(a.stdout, b.String())
	return err
}
