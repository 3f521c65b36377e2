package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/memdir"
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

	// resolved caches location's answer: a command resolves the memory dir
	// once, so its warnings are shown once and every part of the command
	// (sync, extract, dream, hook) works on the same validated directory.
	resolved *resolvedLocation
	// warn shows one of Resolve's warnings; nil means on stderr. A hook,
	// which must print nothing, sends them to its log instead.
	warn func(msg string)
	// create is --create: make a --dir that does not exist.
	create bool
	// session is the Claude Code session id of the hook input being
	// handled ("" outside a hook): the client sends it with its writes.
	session string
	// dreamPoll is how often dream --team polls its dream; 0 means
	// defaultDreamPoll. Tests shorten it.
	dreamPoll time.Duration
}

// resolvedLocation is what memdir.Resolve answered.
type resolvedLocation struct {
	loc memdir.Location
	err error
}

func newApp(getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) *app {
	return &app{getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
}

// root builds the command tree. Usage mistakes anywhere in it (flags,
// arguments, unknown commands) come back as usageError, exit 2.
func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "teammem",
		Short: "Keep Claude Code's memory directory in sync with a teammem server",
		Long: "teammem finds the memory directory Claude Code uses for the repository you are in,\n" +
			"syncs team/ with the repo's team memory and the rest with your personal memory,\n" +
			"and runs memory extraction and consolidation with a model you configure.\n\n" + exitCodesPhrase,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Without a Run of its own, cobra would print help and succeed on
		// an unknown command; with one, the unknown name reaches Args.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q; run teammem --help for the list", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
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
	pf.BoolVar(&a.create, "create", false, "create the --dir directory (0700) when it does not exist")
	root.AddCommand(a.loginCmd(), a.pullCmd(), a.pushCmd(), a.syncCmd(), a.statusCmd(), a.watchCmd(), a.scanCmd(), a.indexCmd(),
		a.logCmd(), a.extractCmd(), a.dreamCmd(), a.hookCmd(), a.agentsCmd(), a.sessionMemoryCmd(), a.claudeCmd(), a.proxyCmd(), a.configCmd(), a.mcpCmd(), a.searchCmd())
	usageArgs(root)
	return root
}

// usageArgs makes every argument mistake a usage error (exit 2): a command
// that declares no Args takes none, and whatever an Args check refuses is
// wrapped in usageError.
func usageArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
	check := c.Args
	if check == nil {
		check = cobra.NoArgs
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
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
	key = first(a.apiKey, a.getenv("TEAMMEM_API_KEY"), c.APIKey)
	server, err = a.serverURL(c.Server)
	switch {
	case err != nil:
		return "", "", err
	case server == "":
		return "", "", fmt.Errorf("no server configured: run `teammem login --server URL` or set TEAMMEM_SERVER")
	case key == "":
		return "", "", fmt.Errorf("no API key configured: run `teammem login` or set TEAMMEM_API_KEY")
	}
	return server, key, nil
}

// serverURL returns the server URL from --server, TEAMMEM_SERVER or saved
// (the login's), checked by parseServerURL; "" when none is set. A bad
// --server is a usage error; a bad variable or saved login names where the
// value came from.
func (a *app) serverURL(saved string) (string, error) {
	raw, from := a.server, "--server"
	switch {
	case raw != "":
	case a.getenv("TEAMMEM_SERVER") != "":
		raw, from = a.getenv("TEAMMEM_SERVER"), "TEAMMEM_SERVER"
	default:
		raw, from = saved, "the saved login (run teammem login again)"
	}
	if raw == "" {
		return "", nil
	}
	u, err := parseServerURL(raw)
	switch {
	case err != nil && from == "--server":
		return "", &usageError{fmt.Errorf("--server %q: %v", raw, err)}
	case err != nil:
		return "", fmt.Errorf("server URL %q from %s: %v", raw, from, err)
	}
	return u, nil
}

// parseServerURL checks a server URL the one way every command does: an
// http or https URL with a host and nothing after the path. It returns the
// URL without a trailing slash.
func parseServerURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return "", errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("want an http:// or https:// URL")
	case u.Host == "" || u.Hostname() == "":
		return "", errors.New("the URL has no host")
	case u.User != nil:
		return "", errors.New("put the API key in TEAMMEM_API_KEY, not in the URL")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", errors.New("the URL must not have a query or fragment")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// first returns the first non-empty value: flag, then environment, then
// saved login, in that order everywhere.
func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// location resolves the memory directory the way Claude Code does, with
// teammem's rules for what the repository controls (memdir.Resolve). The
// first call of a command shows the warnings; later calls reuse its answer.
func (a *app) location() (memdir.Location, error) {
	if a.resolved == nil {
		loc, err := a.resolveLocation()
		a.resolved = &resolvedLocation{loc, err}
		for _, w := range loc.Warnings {
			if a.warn != nil {
				a.warn(w)
			} else {
				fmt.Fprintln(a.stderr, "teammem: warning:", w)
			}
		}
	}
	return a.resolved.loc, a.resolved.err
}

func (a *app) resolveLocation() (memdir.Location, error) {
	cwd := a.cwd
	if cwd == "" {
		var err error
		if cwd, err = os.Getwd(); err != nil {
			return memdir.Location{}, err
		}
	}
	home, _ := os.UserHomeDir()
	loc, err := memdir.Resolve(memdir.Options{Cwd: cwd, Getenv: a.getenv, Home: home, Dir: first(a.dir, a.getenv("TEAMMEM_MEMORY_DIR"))})
	if err != nil || loc.Source != memdir.SourceFlag {
		return loc, err // Claude Code's own location is made on first write, as it does
	}
	return loc, a.explicitDir(loc.MemoryDir)
}

// explicitDir checks a memory dir named by --dir or TEAMMEM_MEMORY_DIR: it
// must exist (a typo would otherwise sync into a fresh, empty directory)
// unless --create asks for it to be made.
func (a *app) explicitDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && fi.IsDir():
		return nil
	case err == nil:
		return fmt.Errorf("memory directory %s is not a directory", dir)
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("memory directory: %w", err)
	case !a.create:
		return &usageError{fmt.Errorf("memory directory %s does not exist; check --dir (or TEAMMEM_MEMORY_DIR) or pass --create to create it", dir)}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create memory directory: %w", err)
	}
	return nil
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
