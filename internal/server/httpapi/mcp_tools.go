package httpapi

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teammem/teammem/internal/teammem"
)

// The memory tool's commands (memory_20250818) over teammem's spaces, with
// its argument names and its result and error texts, so that an agent
// trained on the tool reads teammem's answers as it reads the tool's.
// Every write goes through s.write, the one write path.

// lineNumberWidth is the width of the memory tool's line numbers.
const lineNumberWidth = 6

type viewArgs struct {
	Path      string `json:"path" jsonschema:"a path under /memories: /memories, /memories/team, /memories/personal or a file or directory within them"`
	ViewRange []int  `json:"view_range,omitempty" jsonschema:"optional [start, end] line range of a file, 1-based; end -1 means to the end"`
	Repo      string `json:"repo,omitempty" jsonschema:"the repository (owner/name); required unless the session was opened at /mcp?repo=owner/name"`
}

type createArgs struct {
	Path     string `json:"path" jsonschema:"the file to create, under /memories/team or /memories/personal"`
	FileText string `json:"file_text" jsonschema:"the file's content"`
	Repo     string `json:"repo,omitempty" jsonschema:"the repository (owner/name); required unless the session was opened at /mcp?repo=owner/name"`
}

type strReplaceArgs struct {
	Path   string `json:"path" jsonschema:"the file to edit"`
	OldStr string `json:"old_str" jsonschema:"text that appears exactly once in the file"`
	NewStr string `json:"new_str" jsonschema:"its replacement"`
	Repo   string `json:"repo,omitempty" jsonschema:"the repository (owner/name); required unless the session was opened at /mcp?repo=owner/name"`
}

type insertArgs struct {
	Path       string `json:"path" jsonschema:"the file to edit"`
	InsertLine int    `json:"insert_line" jsonschema:"the line after which to insert (0 = at the top)"`
	InsertText string `json:"insert_text" jsonschema:"the text to insert"`
	Repo       string `json:"repo,omitempty" jsonschema:"the repository (owner/name); required unless the session was opened at /mcp?repo=owner/name"`
}

type deleteArgs struct {
	Path string `json:"path" jsonschema:"the file or directory to delete"`
	Repo string `json:"repo,omitempty" jsonschema:"the repository (owner/name); required unless the session was opened at /mcp?repo=owner/name"`
}

type renameArgs struct {
	OldPath string `json:"old_path" jsonschema:"the file or directory to rename"`
	NewPath string `json:"new_path" jsonschema:"its new path, in the same scope"`
	Repo    string `json:"repo,omitempty" jsonschema:"the repository (owner/name); required unless the session was opened at /mcp?repo=owner/name"`
}

// addMemoryTools registers the six commands on srv.
func (h *mcpHub) addMemoryTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "view", Description: "Show a directory of the team's and your memory (two levels deep, with sizes) or a file with line numbers."},
		func(ctx context.Context, req *mcp.CallToolRequest, a viewArgs) (*mcp.CallToolResult, any, error) {
			return h.run(ctx, req, a.Repo, func(c mcpCall) (string, error) { return h.view(ctx, c, a) })
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "create", Description: "Create a memory file under /memories/team (shared with the team) or /memories/personal (yours)."},
		func(ctx context.Context, req *mcp.CallToolRequest, a createArgs) (*mcp.CallToolResult, any, error) {
			return h.run(ctx, req, a.Repo, func(c mcpCall) (string, error) { return h.create(ctx, c, a) })
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "str_replace", Description: "Replace text that appears exactly once in a memory file."},
		func(ctx context.Context, req *mcp.CallToolRequest, a strReplaceArgs) (*mcp.CallToolResult, any, error) {
			return h.run(ctx, req, a.Repo, func(c mcpCall) (string, error) { return h.strReplace(ctx, c, a) })
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "insert", Description: "Insert text into a memory file after a line."},
		func(ctx context.Context, req *mcp.CallToolRequest, a insertArgs) (*mcp.CallToolResult, any, error) {
			return h.run(ctx, req, a.Repo, func(c mcpCall) (string, error) { return h.insert(ctx, c, a) })
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "delete", Description: "Delete a memory file or directory (its history is kept)."},
		func(ctx context.Context, req *mcp.CallToolRequest, a deleteArgs) (*mcp.CallToolResult, any, error) {
			return h.run(ctx, req, a.Repo, func(c mcpCall) (string, error) { return h.delete(ctx, c, a) })
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "rename", Description: "Rename or move a memory file or directory within its scope (ids and history are kept)."},
		func(ctx context.Context, req *mcp.CallToolRequest, a renameArgs) (*mcp.CallToolResult, any, error) {
			return h.run(ctx, req, a.Repo, func(c mcpCall) (string, error) { return h.rename(ctx, c, a) })
		})
}

// run resolves a call and answers fn's text, or its error as a tool error.
func (h *mcpHub) run(ctx context.Context, req *mcp.CallToolRequest, repo string, fn func(mcpCall) (string, error)) (*mcp.CallToolResult, any, error) {
	c, err := h.callOf(req, repo, true)
	if err != nil {
		return nil, nil, err
	}
	text, err := fn(c)
	if err != nil {
		return nil, nil, h.toolError(ctx, err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

func (h *mcpHub) view(ctx context.Context, c mcpCall, a viewArgs) (string, error) {
	mp, err := parseMemPath(a.Path)
	if err != nil {
		return "", err
	}
	if mp.Scope != "" && mp.Key != "" {
		if e, err := h.file(ctx, c, mp); err == nil {
			return numbered(mp.Raw, e.Content, a.ViewRange), nil
		} else if teammem.ErrorCode(err) == teammem.EForbidden || teammem.ErrorCode(err) == teammem.EInternal {
			return "", err
		}
	}
	scopes := []teammem.Scope{mp.Scope}
	if mp.Scope == "" {
		scopes = []teammem.Scope{teammem.ScopeTeam, teammem.ScopePersonal}
	}
	type item struct {
		path string
		size int
	}
	sizes := map[string]int{}
	total, found := 0, mp.Key == ""
	for _, sc := range scopes {
		es, err := h.entries(ctx, c, sc, false)
		if err != nil {
			return "", err
		}
		if mp.Scope == "" {
			sizes[string(sc)+"/"] += 0
		}
		for _, e := range es {
			rel := e.Key
			if mp.Key != "" {
				if !strings.HasPrefix(e.Key, mp.Key+"/") {
					continue
				}
				rel = strings.TrimPrefix(e.Key, mp.Key+"/")
			}
			if mp.Scope == "" {
				rel = string(sc) + "/" + rel
			}
			found = true
			total += e.Size
			// Two levels: the first segment, and the second below it.
			segs := strings.SplitN(rel, "/", 3)
			for depth := 1; depth <= 2 && depth <= len(segs); depth++ {
				p := strings.Join(segs[:depth], "/")
				if depth < len(segs) {
					p += "/"
				}
				sizes[p] += e.Size
			}
		}
	}
	if !found {
		return "", fmt.Errorf("The path %s does not exist. Please provide a valid path.", mp.Raw)
	}
	items := make([]item, 0, len(sizes))
	for p, n := range sizes {
		items = append(items, item{p, n})
	}
	sort.Slice(items, func(i, j int) bool { return items[i].path < items[j].path })
	var b strings.Builder
	fmt.Fprintf(&b, "Here're the files and directories up to 2 levels deep in %s, excluding hidden items and node_modules:\n", mp.Raw)
	fmt.Fprintf(&b, "%s\t%s", fileSize(total), mp.Raw)
	for _, it := range items {
		fmt.Fprintf(&b, "\n%s\t%s/%s", fileSize(it.size), mp.Raw, it.path)
	}
	return b.String(), nil
}

// numbered is the memory tool's view of a file: its lines numbered, within
// view_range ([start, end], 1-based, end -1 for the last line) when given.
func numbered(path, content string, viewRange []int) string {
	lines := strings.Split(content, "\n")
	start, end := 0, len(lines)
	if len(viewRange) == 2 {
		start = max(1, viewRange[0]) - 1
		if viewRange[1] != -1 {
			end = min(viewRange[1], len(lines))
		}
		start = min(start, len(lines))
		end = max(end, start)
	}
	return "Here's the content of " + path + " with line numbers:\n" + numberLines(lines[start:end], start+1)
}

// numberLines numbers lines from first, as the memory tool prints them.
func numberLines(lines []string, first int) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fmt.Sprintf("%*d\t%s", lineNumberWidth, first+i, l)
	}
	return strings.Join(out, "\n")
}

// fileSize words a size as the memory tool does: 0B, 512B, 1.5K, 2M.
func fileSize(n int) string {
	if n == 0 {
		return "0B"
	}
	units := []string{"B", "K", "M", "G"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d%s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f%s", f, units[i])
}

// fileTarget parses a path that must name a file within a scope.
func fileTarget(p string) (memPath, error) {
	mp, err := parseMemPath(p)
	if err != nil {
		return mp, err
	}
	if mp.Scope == "" || mp.Key == "" {
		return mp, fmt.Errorf("The path %s is not a file.", mp.Raw)
	}
	return mp, nil
}

func (h *mcpHub) create(ctx context.Context, c mcpCall, a createArgs) (string, error) {
	mp, err := fileTarget(a.Path)
	if err != nil {
		return "", err
	}
	up := teammem.Upsert{Key: mp.Key, Content: a.FileText, Base: new(string)}
	note, err := h.write(ctx, c, mp.Scope, teammem.WriteRequest{Upserts: []teammem.Upsert{up}})
	if teammem.ErrorCode(err) == teammem.EConflict {
		return "", fmt.Errorf("File %s already exists", mp.Raw)
	}
	if err != nil || note != "" && strings.HasPrefix(note, heldPrefix) {
		return note, err
	}
	return "File created successfully at: " + mp.Raw + note, nil
}

func (h *mcpHub) strReplace(ctx context.Context, c mcpCall, a strReplaceArgs) (string, error) {
	mp, err := fileTarget(a.Path)
	if err != nil {
		return "", err
	}
	e, err := h.file(ctx, c, mp)
	if err != nil {
		return "", err
	}
	lines := strings.Split(e.Content, "\n")
	var matching []string
	first := -1
	for i, l := range lines {
		if strings.Contains(l, a.OldStr) {
			matching = append(matching, fmt.Sprint(i+1))
			if first < 0 {
				first = i
			}
		}
	}
	switch {
	case len(matching) == 0:
		return "", fmt.Errorf("No replacement was performed, old_str `%s` did not appear verbatim in %s.", a.OldStr, mp.Raw)
	case len(matching) > 1:
		return "", fmt.Errorf("No replacement was performed. Multiple occurrences of old_str `%s` in lines: %s. Please ensure it is unique", a.OldStr, strings.Join(matching, ", "))
	}
	content := strings.Replace(e.Content, a.OldStr, a.NewStr, 1)
	base := e.Checksum // the content the edit was made on, or a conflict
	note, err := h.write(ctx, c, mp.Scope, teammem.WriteRequest{Upserts: []teammem.Upsert{{Key: mp.Key, Content: content, Base: &base}}})
	if err != nil || strings.HasPrefix(note, heldPrefix) {
		return note, err
	}
	newLines := strings.Split(content, "\n")
	from, to := max(0, first-2), min(len(newLines), first+3)
	return "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
		numberLines(newLines[from:to], from+1) + note, nil
}

func (h *mcpHub) insert(ctx context.Context, c mcpCall, a insertArgs) (string, error) {
	mp, err := fileTarget(a.Path)
	if err != nil {
		return "", err
	}
	e, err := h.file(ctx, c, mp)
	if err != nil {
		return "", err
	}
	lines := strings.Split(e.Content, "\n")
	if a.InsertLine < 0 || a.InsertLine > len(lines) {
		return "", fmt.Errorf("Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", a.InsertLine, len(lines))
	}
	lines = append(lines[:a.InsertLine], append([]string{strings.TrimSuffix(a.InsertText, "\n")}, lines[a.InsertLine:]...)...)
	base := e.Checksum
	note, err := h.write(ctx, c, mp.Scope, teammem.WriteRequest{Upserts: []teammem.Upsert{{Key: mp.Key, Content: strings.Join(lines, "\n"), Base: &base}}})
	if err != nil || strings.HasPrefix(note, heldPrefix) {
		return note, err
	}
	return "The file " + mp.Raw + " has been edited." + note, nil
}
