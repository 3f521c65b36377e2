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

	"github.com/teammem/teammem/internal/memdir"
	memsync "github.com/teammem/teammem/internal/sync"
)

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
			server := strings.TrimRight(first(a.server, a.getenv("TEAMMEM_SERVER")), "/")
			if server == "" {
				return &usageError{fmt.Errorf("--server URL is required")}
			}
			if !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://") {
				return &usageError{fmt.Errorf("--server %q: want an http:// or https:// URL", server)}
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
				c := &memsync.Client{BaseURL: server, Key: key, HTTP: &http.Client{Timeout: 15 * time.Second}}
				me, err := c.WhoAmI(ctx)
				if err != nil {
					return fmt.Errorf("checking the key with %s: %w", server, err)
				}
				who = fmt.Sprintf(" as %s in org %s", me.User.Handle, me.Org.Slug)
			}
			p, err := a.configPath()
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
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

// writeConfig writes the config file atomically with mode 0600.
func writeConfig(path string, c config) error {
	b := fmt.Appendf(nil, "{\n  \"server\": %q,\n  \"api_key\": %q\n}\n", c.Server, c.APIKey)
	if _, err := memdir.WriteAtomic(filepath.Dir(path), filepath.Base(path), b); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}
