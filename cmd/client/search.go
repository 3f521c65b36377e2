package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/wire"
)

// searchCmd is `teammem search`: the server's full-text search over the
// memory the key may read.
func (a *app) searchCmd() *cobra.Command {
	var allRepos bool
	var scope, page string
	var limit int
	cmd := &cobra.Command{
		Use:   "search WORDS...",
		Short: "Search this repository's team and personal memory on the server (--all-repos: every repository)",
		Long: "search asks the server for the memory files that hold every one of WORDS (letters and digits,\n" +
			"in any case; a word ending in * matches every word it begins; a file's path counts as its text),\n" +
			"best first, and prints each as its repository, its path in the memory directory (team/… for\n" +
			"team memory) and a line around the first match, the matches marked [[like this]]. It searches\n" +
			"the repository found from the working directory (or --repo), or every repository of the org\n" +
			"with --all-repos, in the team memory and your own personal memory.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			q := strings.TrimSpace(strings.Join(args, " "))
			if q == "" {
				return &usageError{errors.New("search: give the words to search for")}
			}
			switch scope {
			case "all":
				scope = ""
			case "team", "personal":
			default:
				return &usageError{fmt.Errorf("--scope %q: want team, personal or all", scope)}
			}
			if limit < 1 || limit > 100 {
				return &usageError{fmt.Errorf("--limit %d: want 1 to 100", limit)}
			}
			var repo, server, key string
			var err error
			if allRepos {
				server, key, err = a.credentials()
			} else {
				loc, lerr := a.location()
				if lerr != nil {
					return lerr
				}
				repo, server, key, err = a.repoServer(loc)
			}
			if err != nil {
				return err
			}
			c := &apiclient.Client{BaseURL: server, Key: key, Repo: repo, UserAgent: "teammem-client", HTTP: &http.Client{Timeout: 30 * time.Second}}
			res, err := c.Search(cmd.Context(), apiclient.SearchQuery{Q: q, Repo: repo, Scope: scope, Limit: limit, Page: page})
			if err != nil {
				return fmt.Errorf("search: %w", err)
			}
			if a.jsonOut {
				return a.printJSON(res)
			}
			a.printHits(q, res)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&allRepos, "all-repos", false, "search every repository of the org, not only this one")
	f.StringVar(&scope, "scope", "all", "team, personal or all")
	f.IntVar(&limit, "limit", 20, "hits per page, 1 to 100")
	f.StringVar(&page, "page", "", "the cursor a previous search printed, for its next page")
	return cmd
}

// printHits prints a page of hits as people read them: a line naming the
// file, then its snippet, with the matches in bold on a terminal.
func (a *app) printHits(q string, res wire.SearchPage) {
	if len(res.Data) == 0 {
		fmt.Fprintf(a.stderr, "no memory matches %q\n", q)
		return
	}
	open, close := wire.MarkOpen, wire.MarkClose
	if isTerminal(a.stdout) {
		open, close = "\x1b[1m", "\x1b[0m"
	}
	for _, h := range res.Data {
		path := h.Path
		if h.Scope == "team" {
			path = "team/" + path
		}
		by := ""
		if h.UpdatedBy != "" {
			by = " by " + h.UpdatedBy
		}
		fmt.Fprintf(a.stdout, "%s  %s  (%s%s)\n", h.Repo, path, h.UpdatedAt.Local().Format("2006-01-02 15:04"), by)
		snippet := strings.NewReplacer(wire.MarkOpen, open, wire.MarkClose, close).Replace(h.Snippet)
		fmt.Fprintf(a.stdout, "    %s\n", snippet)
	}
	if res.NextPage != nil {
		fmt.Fprintf(a.stderr, "more hits: add --page %s\n", *res.NextPage)
	}
}
