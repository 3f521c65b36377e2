package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/memdir"
)

// maxLogInput bounds a log entry read from stdin.
const maxLogInput = 1 << 20

// logCmd is `teammem log`: append a note to today's daily log, which the
// next dream reads first. The date is the local one, as Claude Code's.
func (a *app) logCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "log TEXT... | log -",
		Short: "Append a note to today's daily log, logs/YYYY/MM/YYYY-MM-DD.md in the memory directory",
		Long: "log appends TEXT (the arguments joined by spaces, or stdin when the only argument is -) as a\n" +
			"timestamped list item to today's daily log, by the local date, and prints the log's path.\n" +
			"The next dream reads the daily logs first.",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := a.logText(args)
			if err != nil {
				return err
			}
			loc, err := a.location()
			if err != nil {
				return err
			}
			// AppendLog writes atomically inside the memory dir, with its
			// containment checks; a new day's log gets its heading.
			key, err := memdir.AppendLog(loc.MemoryDir, time.Now(), text)
			if err != nil {
				return err
			}
			path := filepath.Join(loc.MemoryDir, filepath.FromSlash(key))
			if a.jsonOut {
				return a.printJSON(map[string]string{"path": path, "key": key})
			}
			fmt.Fprintln(a.stdout, path)
			return nil
		},
	}
}

// logText returns the entry: the arguments, or stdin for "-".
func (a *app) logText(args []string) (string, error) {
	text := strings.Join(args, " ")
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(a.stdin, maxLogInput+1))
		if err != nil {
			return "", fmt.Errorf("log: read stdin: %w", err)
		}
		if len(b) > maxLogInput {
			return "", &usageError{fmt.Errorf("log: stdin holds more than %d bytes", maxLogInput)}
		}
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return "", &usageError{errors.New("log: nothing to write: give the text as arguments, or - to read it from stdin")}
	}
	return text, nil
}
