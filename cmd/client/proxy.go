package main

import (
	"fmt"

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
			"lines). It serves until interrupted. Same hand-over and --migrate rules as teammem claude.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, err := a.prepareNative(cmd.Context(), o)
			if err != nil {
				return err
			}
			p, bound, err := a.startProxy(ns, addr)
			if err != nil {
				return err
			}
			defer p.Close()
			if err := a.printEnv(ns.env(a, bound.String(), o)); err != nil {
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
