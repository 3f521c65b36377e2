package extract

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/teammem"
)

// headerReadLimit bounds what is read of one file for its header: 30 lines
// of a sane memory file fit easily, and a file of one huge line costs no
// more than this.
const headerReadLimit = 64 << 10

// Manifest lists the memories in dir (team/ and other subdirectories
// included) the way Claude Code's memory scan does (reference §2.9): the
// topic files' frontmatter, parsed from their first 30 lines, newest first,
// at most 200, one line each. Symlinks are not followed, unreadable files are
// left out, and a directory that cannot be read gives an empty manifest.
func Manifest(dir string) string {
	return teammem.FormatManifest(teammem.RecentHeaders(scanHeaders(dir)))
}

// scanHeaders reads the header of every topic file under dir.
func scanHeaders(dir string) []teammem.MemoryHeader {
	var headers []teammem.MemoryHeader
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil // WalkDir neither follows symlinks nor fails the walk for one entry
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if !teammem.IsTopicFile(rel) || strings.HasPrefix(d.Name(), memdir.TempPrefix) {
			return nil
		}
		if h, ok := readHeader(p, rel); ok {
			headers = append(headers, h)
		}
		return nil
	})
	return headers
}

// readHeader parses one file's header, taking the mtime from the same open
// file.
func readHeader(p, rel string) (teammem.MemoryHeader, bool) {
	f, err := os.Open(p)
	if err != nil {
		return teammem.MemoryHeader{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return teammem.MemoryHeader{}, false
	}
	var b strings.Builder
	r := bufio.NewReader(io.LimitReader(f, headerReadLimit))
	for range teammem.FrontmatterMaxLines {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			break
		}
	}
	return teammem.ParseHeader(rel, fi.ModTime(), b.String()), true
}
