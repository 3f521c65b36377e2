package poison

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkCheckEntry runs every rule over a 2 KB memory file (the bench's
// delta push) and a 250 KB one (the default entry cap).
func BenchmarkCheckEntry(b *testing.B) {
	src, err := os.ReadFile("../teammem/testdata/memory/project_billing_migration.md")
	if err != nil {
		b.Fatal(err)
	}
	for name, size := range map[string]int{"2KB": 2_000, "250KB": 250_000} {
		content := strings.Repeat(string(src), size/len(src)+1)[:size]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				(Checker{}).CheckEntry("project_billing_migration.md", content)
			}
		})
	}
}
