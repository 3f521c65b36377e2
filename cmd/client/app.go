package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/memdir"
)

// app holds the process's I/O and the global flags; commands read their
// settings through it, never from globals.
type app struct {
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	// Global flags.
	server  string
	apiKey  string
	dir     string
	repo    string
	cwd     string
	jsonOut bool
}

func newApp(getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) *app {
	return &app{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "teammem",
		Short: "Keep Claude Code's memory directory in sync with a teammem server",
		Long: "teammem finds the memory directory Claude Code uses for the repository you are in,\n" +
			"syncs team/ with the repo's team memory and the rest with your personal memory,\n" +
			"and runs memory extraction and consolidation with a model you configure.\n\n" +
			"Exit codes: 0 success, 1 failure, 2 bad usage, 3 secrets found (scan) or lint problems (index --lint).",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.server, "server", "", "server URL (default: TEAMMEM_SERVER, then the saved login)")
	pf.StringVar(&a.apiKey, "api-key", "", "API key (default: TEAMMEM_API_KEY, then the saved login); prefer the variable")
	pf.StringVar(&a.dir, "dir", "", "memory directory (default: TEAMMEM_MEMORY_DIR, then where Claude Code keeps it)")
	pf.StringVar(&a.repo, "repo", "", "repo slug owner/name or host/owner/name (default: from the origin remote)")
	pf.StringVar(&a.cwd, "cwd", "", "work as if started in this directory")
	pf.BoolVar(&a.jsonOut, "json", false, "print JSON for scripts instead of text")
	root.AddCommand(a.loginCmd(), a.pullCmd(), a.pushCmd(), a.syncCmd(), a.statusCmd(), a.watchCmd(), a.scanCmd(), a.indexCmd(),
		a.logCmd(), a.extractCmd(), a.dreamCmd(), a.hookCmd(), a.agentsCmd(), a.sessionMemoryCmd())
	return root
}

// config is what `teammem login` saves.
type config struct {
	Server string `json:"server"`
	APIKey string `json:"api_key"`
}

// configDir is the user config dir (XDG_CONFIG_HOME or the platform's).
func (a *app) configDir() (string, error) {
	if d := a.getenv("XDG_CONFIG_HOME"); d != "" {
		return d, nil
	}
	return os.UserConfigDir()
}

func (a *app) configPath() (string, error) {
	d, err := a.configDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "teammem", "config.json"), nil
}

func (a *app) loadConfig() (config, error) {
	var c config
	p, err := a.configPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s is not valid JSON: %v", p, err)
	}
	return c, nil
}

// credentials returns server and key: flag, then environment, then login.
func (a *app) credentials() (server, key string, err error) {
	c, err := a.loadConfig()
	if err != nil {
		return "", "", err
	}
	server = first(a.server, a.getenv("TEAMMEM_SERVER"), c.Server)
	key = first(a.apiKey, a.getenv("TEAMMEM_API_KEY"), c.APIKey)
	switch {
	case server == "":
		return "", "", fmt.Errorf("no server configured: run `teammem login --server URL` or set TEAMMEM_SERVER")
	case key == "":
		return "", "", fmt.Errorf("no API key configured: run `teammem login` or set TEAMMEM_API_KEY")
	}
	return strings.TrimRight(server, "/"), key, nil
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// location resolves the memory directory the way Claude Code does.
func (a *app) location() (memdir.Location, error) {
	cwd := a.cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return memdir.Location{}, err
		}
	}
	home, _ := os.UserHomeDir()
	return memdir.Resolve(memdir.Options{Cwd: cwd, Getenv: a.getenv, Home: home, Dir: first(a.dir, a.getenv("TEAMMEM_MEMORY_DIR"))})
}

// localStateDir is where the client keeps per-directory state that does not
// depend on a server (extraction cursors, the dream's scan throttle, hook
// logs): <user config dir>/teammem/local/<hash of the memory dir>.
func (a *app) localStateDir(loc memdir.Location) (string, error) {
	d, err := a.configDir()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(loc.MemoryDir))
	dir := filepath.Join(d, "teammem", "local", hex.EncodeToString(h[:8]))
	return dir, os.MkdirAll(dir, 0o700)
}

// repoSlug returns --repo or the slug of the origin remote.
func (a *app) repoSlug(loc memdir.Location) (string, error) {
	if a.repo != "" {
		return a.repo, nil
	}
	root := loc.GitRoot
	if root == "" {
		return "", fmt.Errorf("not inside a git work tree: run teammem in your repository or pass --repo owner/name")
	}
	url, err := memdir.OriginURL(root)
	if err != nil || url == "" {
		return "", fmt.Errorf("the repository has no origin remote: add one or pass --repo owner/name")
	}
	slug, ok := memdir.RepoSlug(url)
	if !ok {
		return "", fmt.Errorf("cannot derive owner/name from the origin remote; pass --repo owner/name")
	}
	return slug, nil
}

// printJSON writes v as indented JSON to stdout.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// isTerminal reports whether w is a terminal (for progress output).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
