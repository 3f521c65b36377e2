package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/server/console"
	"github.com/teammem/teammem/internal/teammem"
)

// adminLoginLinkCmd is `teammem-server admin login-link`: a one-time link that
// signs a browser in to the console as a user. It mints a key for the user
// that nobody ever sees (named "console login link", expiring with the
// session) and a link to it that works once, within --link-ttl.
func adminLoginLinkCmd(r *storeRunner) *cobra.Command {
	var org, user, baseURL string
	var linkTTL, sessionTTL time.Duration
	cmd := &cobra.Command{
		Use:   "login-link",
		Short: "Print a one-time link that signs a browser in to the web console (/ui/) as a user",
		Args:  cobra.NoArgs,
		RunE: r.run(func(cmd *cobra.Command, st teammem.Store) error {
			cs, ok := st.(teammem.ConsoleStore)
			if !ok {
				return fmt.Errorf("this database driver keeps no console sessions")
			}
			if linkTTL <= 0 || sessionTTL <= 0 {
				return fmt.Errorf("--link-ttl and --session-ttl must be positive")
			}
			o, err := st.OrgGetBySlug(cmd.Context(), org)
			if err != nil {
				return fmt.Errorf("org %q: %w", org, err)
			}
			u, err := st.UserGetByHandle(cmd.Context(), o.ID, user)
			if err != nil {
				return fmt.Errorf("user %q: %w", user, err)
			}
			if u.Disabled {
				return fmt.Errorf("user %q is disabled", user)
			}
			now := time.Now().UTC()
			expires := now.Add(sessionTTL)
			key, err := newKey(cmd, st, o, u, "console login link", false, &expires)
			if err != nil {
				return err
			}
			token, hash := console.NewLoginLink()
			l := teammem.LoginLink{TokenHash: hash, KeyHash: teammem.HashKey(key), ExpiresAt: now.Add(linkTTL)}
			if err := cs.LoginLinkCreate(cmd.Context(), o.ID, l); err != nil {
				return fmt.Errorf("store the link: %w", err)
			}
			fmt.Fprintf(r.stdout, "%s/ui/link?token=%s\n", strings.TrimRight(baseURL, "/"), token)
			return nil
		}),
	}
	cmd.Flags().StringVar(&org, "org", "default", "org slug")
	cmd.Flags().StringVar(&user, "user", "", "user handle")
	cmd.Flags().StringVar(&baseURL, "base-url", "http://127.0.0.1:8080", "the server's URL as the browser reaches it")
	cmd.Flags().DurationVar(&linkTTL, "link-ttl", 15*time.Minute, "the link works once, within this long")
	cmd.Flags().DurationVar(&sessionTTL, "session-ttl", 12*time.Hour, "the session (and the key it acts with) ends after this long")
	_ = cmd.MarkFlagRequired("user")
	return cmd
}
