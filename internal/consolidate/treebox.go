package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/teammem/teammem/internal/llm"
)

// TreeToolbox is the Toolbox of a dream over a Tree: list, read, grep and
// glob over the tree and the read-only Sources; write, edit and delete on
// the tree only. Paths are shown to the model with a leading slash and
// accepted with or without one. Every refusal and every Tree error (but a
// missing file) is a tool error recorded in Denied. It is safe for
// concurrent use.
type TreeToolbox struct {
	ctx     context.Context
	tree    Tree
	sources map[string]string

	mu       sync.Mutex
	readKeys map[string]bool
	touched  []string
	denied   []string
}

var _ Toolbox = (*TreeToolbox)(nil)

// NewTreeToolbox returns the toolbox over tree; ctx bounds every Tree call
// (Toolbox.Call has none). sources maps read-only paths, without a leading
// slash ("sessions/sesn_x.md"), to their text; they shadow tree files of
// the same path.
func NewTreeToolbox(ctx context.Context, tree Tree, sources map[string]string) *TreeToolbox {
	return &TreeToolbox{ctx: ctx, tree: tree, sources: sources, readKeys: map[string]bool{}}
}

// Tools implements Toolbox.
func (b *TreeToolbox) Tools() []llm.Tool {
	return Tools("memory store", "Files under /sessions/ are read-only session material; search them too.")
}

// Touched returns the paths written, edited or deleted (no leading slash),
// in first-touch order.
func (b *TreeToolbox) Touched() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.touched)
}

// Denied returns the refusals and Tree errors the model was shown.
func (b *TreeToolbox) Denied() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.denied)
}

// Call implements Toolbox.
func (b *TreeToolbox) Call(name string, raw json.RawMessage) (string, bool) {
	in, err := DecodeToolInput(name, raw)
	if err != nil {
		return err.Error(), true
	}
	var out string
	switch name {
	case "list":
		out, err = b.list(in.Path)
	case "read":
		out, err = b.read(in.Path)
	case "grep":
		out, err = b.grep(in)
	case "glob":
		out, err = b.glob(in.Pattern)
	case "write":
		out, err = b.write(in.Path, in.Content)
	case "edit":
		out, err = b.edit(in)
	case "delete":
		out, err = b.del(in.Path)
	default:
		err = b.deny("there is no tool %q; available: %s (no shell)", name, strings.Join(ToolNames, ", "))
	}
	if err != nil {
		return err.Error(), true
	}
	return out, false
}

func (b *TreeToolbox) deny(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	b.mu.Lock()
	b.denied = append(b.denied, msg)
	b.mu.Unlock()
	return errors.New(msg)
}

// treeErr turns a Tree error into the model's tool error; a missing file
// is an answer, not a refusal, and is not recorded.
func (b *TreeToolbox) treeErr(op, key string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("/%s does not exist", key)
	}
	return b.deny("cannot %s /%s: %v", op, key, err)
}

// key turns a tool's path argument into a Tree path, refusing anything
// that is not a clean relative path.
func (b *TreeToolbox) key(p string) (string, error) {
	k, err := cleanPath(p)
	if err != nil {
		return "", b.deny("%v", err)
	}
	if k == "" {
		return "", b.deny("a path is required")
	}
	return k, nil
}

// cleanPath validates a path argument and strips its leading (and, for a
// folder, trailing) slash; "", "/" and "." are the root, returned as "".
func cleanPath(p string) (string, error) {
	if strings.IndexFunc(p, unicode.IsControl) >= 0 {
		return "", fmt.Errorf("%q is not a valid path: it holds control characters", p)
	}
	p = strings.TrimSpace(p)
	if p == "." || p == "/" || p == "" {
		return "", nil
	}
	k := strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/")
	for _, seg := range strings.Split(k, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.Contains(seg, `\`) {
			return "", fmt.Errorf("%s is not a valid path: use /folder/name.md, without empty, . or .. parts or backslashes", p)
		}
	}
	return k, nil
}

// isSource reports whether key is read-only session material.
func (b *TreeToolbox) isSource(key string) bool {
	_, ok := b.sources[key]
	return ok
}

func (b *TreeToolbox) markRead(key string) {
	b.mu.Lock()
	b.readKeys[key] = true
	b.mu.Unlock()
}

func (b *TreeToolbox) touch(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.readKeys[key] = true
	if !slices.Contains(b.touched, key) {
		b.touched = append(b.touched, key)
	}
}

// files returns every path the model may look at, tree and sources,
// sorted, with their sizes and whether they are read-only.
func (b *TreeToolbox) files() ([]File, map[string]bool, error) {
	list, err := b.tree.List(b.ctx)
	if err != nil {
		return nil, nil, b.deny("cannot list the memory store: %v", err)
	}
	ro := map[string]bool{}
	var out []File
	for _, f := range list {
		if !b.isSource(f.Path) {
			out = append(out, f)
		}
	}
	for p, text := range b.sources {
		out = append(out, File{Path: p, Size: len(text)})
		ro[p] = true
	}
	slices.SortFunc(out, func(x, y File) int { return strings.Compare(x.Path, y.Path) })
	return out, ro, nil
}

// under reports whether key lies in folder dir ("" is the root).
func under(key, dir string) bool {
	return dir == "" || key == dir || strings.HasPrefix(key, dir+"/")
}

// content reads key from the sources or the tree; mark records it as read
// (a grep does not: the model saw only matching lines).
func (b *TreeToolbox) content(key string, mark bool) (string, error) {
	if text, ok := b.sources[key]; ok {
		return text, nil
	}
	text, err := b.tree.Read(b.ctx, key)
	if err != nil {
		return "", b.treeErr("read", key, err)
	}
	if mark {
		b.markRead(key)
	}
	return text, nil
}

// grepRE compiles a grep pattern, worded for the model.
func grepRE(pattern string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("pattern does not compile: %v", err)
	}
	return re, nil
}

// globOK reports whether key passes a grep's glob filter.
func globOK(glob, key string) bool {
	return glob == "" || MatchGlob(glob, key) || MatchGlob(glob, path.Base(key))
}
