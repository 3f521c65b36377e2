package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/apiclient"
)

// loginCmd is `teammem login`: check the key with GET /v1/me (unless
// --no-check) and save server and key. A failed check exits 4 or 5 like
// every other request (see main.go).
func (a *app) loginCmd() *cobra.Command {
	var skipCheck bool
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Save the server URL and API key (key from TEAMMEM_API_KEY or standard input)",
		Long: "login stores the server URL and an API key in the user config dir with 0600 permissions.\n" +
			"The key is read from TEAMMEM_API_KEY, else from the first line of standard input,\n" +
			"so it never appears in the shell history. It is checked against the server first.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			server, err := a.serverURL("")
			if err != nil {
				return err
			}
			if server == "" {
				return &usageError{fmt.Errorf("--server URL is required")}
			}
			key := first(a.apiKey, a.getenv("TEAMMEM_API_KEY"))
			if key == "" {
				if isTerminal(a.stderr) {
					fmt.Fprint(a.stderr, "API key: ")
				}
				line, _ := bufio.NewReader(a.stdin).ReadString('\n')
				key = strings.TrimSpace(line)
			}
			if key == "" {
				return &usageError{fmt.Errorf("no API key: set TEAMMEM_API_KEY or pass it on standard input")}
			}
			who := ""
			if !skipCheck {
				ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
				defer cancel()
				c := &apiclient.Client{BaseURL: server, Key: key, HTTP: &http.Client{Timeout: 15 * time.Second}}
				me, err := c.WhoAmI(ctx)
				if err != nil {
					return explain(fmt.Sprintf("checking the key with %s: %s", server, apiclient.FailureOf(err).Message), err)
				}
				who = fmt.Sprintf(" as %s in org %s", me.User.Handle, me.Org.Slug)
			}
			p, err := a.configPath()
			if err != nil {
				return err
			}
			if err := privateDir(filepath.Dir(p)); err != nil {
				return err
			}
			if err := writeConfig(p, config{Server: server, APIKey: key}); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "logged in to %s%s; saved to %s\n", server, who, p)
			return nil
		},
	}
	cmd.Flags().BoolVar(&skipCheck, "no-check", false, "save without checking the key against the server")
	return cmd
}

// privateDir creates dir (and its parents) and makes dir itself 0700, also
// when it already existed with looser permissions: it holds the key.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// writeConfig replaces the config file atomically. The temporary file is
// created 0600 before a byte is written, so the key is never readable by
// others, not even for an instant, and a crash leaves the old file whole.
func writeConfig(path string, c config) error {
	b := fmt.Appendf(nil, "{\n  \"server\": %q,\n  \"api_key\": %q\n}\n", c.Server, c.APIKey)
	f, err := os.CreateTemp(filepath.Dir(path), ".config-*.tmp") // created 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op after the rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
