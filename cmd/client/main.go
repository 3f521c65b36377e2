// Command teammem is the developer-side client: it mirrors Claude Code's
// memory directory and keeps it in sync with a teammem server.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "teammem: the client is not built yet; see README.md")
	os.Exit(2)
}
