package poison

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkRules times each rule alone on a 2 KB memory file.
func BenchmarkRules(b *testing.B) {
	src, _ := os.ReadFile("../../teammem/testdata/memory/project_billing_migration.md")
	content := strings.Repeat(string(src), 2000/len(src)+1)[:2000]
	d := newDoc("a.md", content)
	for _, r := range rules {
		b.Run(r.ID, func(b *testing.B) {
			for b.Loop() {
				r.check(d)
			}
		})
	}
}
