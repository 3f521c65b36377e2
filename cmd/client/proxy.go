package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// defaultProxyAddr is where `teammem proxy` listens unless told otherwise,
// and what `teammem claude --print-env` assumes.
const defaultProxyAddr = "127.0.0.1:7477"

func (a *app) proxyCmd() *cobra.Command {
	var o nativeOptions
	var addr string
	cmd := &cobra.Command{
		Use:   "proxy",
		Short: "Run the memory-store proxy alone, for Claude Code sessions an IDE starts",
		Long: "Runs the proxy `teammem claude` runs in-process, on --addr (loopback only), for the current repo's\n" +
			"team store and your personal store, and prints the variables to give the IDE's Claude Code (sh export\n" +
			"lines). They carry this run's proxy credentials: the proxy refuses every request without them (407 for\n" +
			"CONNECT, 403 otherwise). It serves until interrupted; `teammem claude --print-env` prints the same\n" +
			"variables meanwhile. Starting changes nothing: the scopes are handed over (teammem's last own sync,\n" +
			"--migrate) when a session first uses the proxy. Same --migrate rules and exit codes as teammem claude.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := a.resolveNative(cmd.Context(), o)
			if err != nil {
				return err
			}
			p, bound, secret, err := a.startProxy(ns, addr, func(ctx context.Context) error { return a.handOver(ctx, ns) })
			if err != nil {
				return err
			}
			defer p.Close()
			run, err := a.writeProxyRun(proxyRun{Addr: bound.String(), Secret: secret, PID: os.Getpid(), Legacy: o.legacy, NoPersonal: o.noPersonal})
			if err != nil {
				return err
			}
			defer os.Remove(run)
			if err := a.printEnv(ns.env(a, bound.String(), secret)); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "teammem: proxy listening on %s; Ctrl-C stops it\n", bound)
			<-cmd.Context().Done()
			return nil
		},
	}
	o.flags(cmd)
	cmd.Flags().StringVar(&addr, "addr", defaultProxyAddr, "loopback address to listen on (port 0: any)")
	return cmd
}

// proxyRun is what a running `teammem proxy` leaves for `teammem claude
// --print-env`: its address and secret, in a 0600 file of the user's
// config dir (where the teammem key lives too), removed when it stops.
type proxyRun struct {
	Addr   string `json:"addr"`
	Secret string `json:"secret"`
	PID    int    `json:"pid"`
	Legacy bool   `json:"legacy"` // started with --legacy
	// NoPersonal: started with --no-personal, so it serves no personal
	// store and --print-env prints none.
	NoPersonal bool `json:"no_personal,omitempty"`
}

// proxyRunPath is the run file of a proxy listening on addr.
func (a *app) proxyRunPath(addr string) (string, error) {
	cfg, err := a.configDir()
	if err != nil {
		return "", err
	}
	name := strings.NewReplacer(":", "_", "[", "", "]", "").Replace(addr) + ".json"
	return filepath.Join(cfg, "teammem", "proxy", "run", name), nil
}

// writeProxyRun records a running proxy and returns the file's path.
func (a *app) writeProxyRun(run proxyRun) (string, error) {
	p, err := a.proxyRunPath(run.Addr)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	b, err := json.Marshal(run)
	if err != nil {
		return "", err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return "", err
	}
	return p, os.Rename(tmp, p)
}

// runningProxy returns the run file of the teammem proxy running at addr
// (its secret and what it serves), after checking that something listens
// there and, when legacy is asked for, that the proxy serves it.
func (a *app) runningProxy(addr string, legacy bool) (proxyRun, error) {
	p, err := a.proxyRunPath(addr)
	if err != nil {
		return proxyRun{}, err
	}
	notRunning := fmt.Errorf("no teammem proxy is running at %s: start `teammem proxy --addr %s`, which prints these variables itself", addr, addr)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return proxyRun{}, notRunning
	}
	if err != nil {
		return proxyRun{}, err
	}
	var run proxyRun
	if err := json.Unmarshal(b, &run); err != nil || run.Secret == "" {
		return proxyRun{}, fmt.Errorf("%s is not a teammem proxy's run file; remove it and restart teammem proxy", p)
	}
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return proxyRun{}, notRunning
	}
	c.Close()
	if legacy && !run.Legacy {
		return proxyRun{}, &usageError{fmt.Errorf("the teammem proxy at %s was started without --legacy: it serves no TEAM_MEMORY_SYNC_URL", addr)}
	}
	return run, nil
}
