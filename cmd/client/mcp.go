package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/mcprelay"
	"github.com/teammem/teammem/internal/teammem"
)

// mcpCmd is `teammem mcp`: the team's memory as an MCP server on stdio,
// for any local agent.
func (a *app) mcpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve this repository's team and personal memory to an agent over MCP (stdio)",
		Long: "mcp is an MCP server on stdin/stdout for agents that speak the Model Context Protocol\n" +
			"(Codex, Cursor, Gemini CLI, OpenCode, Claude Code…). Add it to the agent's MCP config:\n\n" +
			"  {\"command\": \"teammem\", \"args\": [\"mcp\"]}\n\n" +
			"It serves the repository found from the working directory (or --repo) with the saved\n" +
			"login (or TEAMMEM_SERVER and TEAMMEM_API_KEY), by relaying the session to the server's\n" +
			"/mcp endpoint: the tools (view, create, str_replace, insert, delete, rename over\n" +
			"/memories/team/… and /memories/personal/…, search, recent) and resources are the server's,\n" +
			"with its secret, poisoning and review checks. After a write succeeds, the scope it wrote is\n" +
			"pulled into the local memory directory when one exists, so Claude Code on this machine sees\n" +
			"it at once. Nothing but the protocol goes to stdout; diagnostics go to stderr.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := a.newSyncEnv()
			if err != nil {
				return err
			}
			server, key, err := a.credentials()
			if err != nil {
				return err
			}
			r := &mcprelay.Relay{
				Endpoint: strings.TrimSuffix(server, "/") + "/mcp?repo=" + url.QueryEscape(env.repo),
				Key:      key, HTTP: &http.Client{}, In: a.stdin, Out: a.stdout, Log: a.stderr,
				Changed: func(ctx context.Context, scopes []teammem.Scope) {
					if _, err := os.Stat(env.loc.MemoryDir); err != nil {
						return // no memory directory on this machine: nothing to keep current
					}
					for _, s := range scopes {
						if _, err := env.engine.Sync(ctx, s, true, false); err != nil && ctx.Err() == nil {
							fmt.Fprintf(a.stderr, "teammem mcp: pulling %s memory after a write: %v\n", s, err)
						}
					}
				},
			}
			return r.Run(cmd.Context())
		},
	}
}
