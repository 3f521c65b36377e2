package consolidate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// File is one entry of a Tree.
type File struct {
	// Path is the entry key, without a leading slash ("team/a.md", "MEMORY.md").
	Path string
	// Size is the content's length in bytes.
	Size int
}

// Tree is memory a TreeToolbox works on: a server memory store, or MemTree.
// Paths are entry keys without a leading slash.
type Tree interface {
	// List returns every file, sorted by path.
	List(ctx context.Context) ([]File, error)
	// Read returns a file's content; an error wrapping ErrNotFound when
	// there is none.
	Read(ctx context.Context, path string) (string, error)
	// Write creates or replaces a file. Its error text is shown to the
	// model, so it must say why (a refusal of the write path) and hold no
	// secret.
	Write(ctx context.Context, path, content string) error
	// Delete removes a file; an error wrapping ErrNotFound when there is none.
	Delete(ctx context.Context, path string) error
}

// ErrNotFound is what a Tree's Read and Delete wrap for a missing file.
var ErrNotFound = errors.New("not found")

// MemTree is a Tree in memory, for tests and dry runs. The zero value is
// empty and ready; it is safe for concurrent use.
type MemTree struct {
	mu    sync.Mutex
	files map[string]string
}

var _ Tree = (*MemTree)(nil)

// NewMemTree returns a MemTree holding a copy of files (path → content).
func NewMemTree(files map[string]string) *MemTree {
	return &MemTree{files: maps.Clone(files)}
}

// List implements Tree.
func (m *MemTree) List(context.Context) ([]File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]File, 0, len(m.files))
	for _, p := range slices.Sorted(maps.Keys(m.files)) {
		out = append(out, File{Path: p, Size: len(m.files[p])})
	}
	return out, nil
}

// Read implements Tree.
func (m *MemTree) Read(_ context.Context, path string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.files[path]
	if !ok {
		return "", fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	return c, nil
}

// Write implements Tree.
func (m *MemTree) Write(_ context.Context, path, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string]string{}
	}
	m.files[path] = content
	return nil
}

// Delete implements Tree.
func (m *MemTree) Delete(_ context.Context, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[path]; !ok {
		return fmt.Errorf("%s: %w", path, ErrNotFound)
	}
	delete(m.files, path)
	return nil
}

// Files returns a copy of every file (path → content).
func (m *MemTree) Files() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.files)
}
