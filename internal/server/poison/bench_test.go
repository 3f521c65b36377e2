package poison

import (
	"os"
	"strings"
	"testing"
)

// BenchmarkCheckEntry runs every rule over a 2 KB memory file (the bench's
// delta push) and a 250 KB one (the default entry cap), each as a topic
// file and as prose in which the rules' own words ("never", "user",
// "always", "run", "without") are on many lines, as in real notes.
func BenchmarkCheckEntry(b *testing.B) {
	src, err := os.ReadFile("../../teammem/testdata/memory/project_billing_migration.md")
	if err != nil {
		b.Fatal(err)
	}
	prose := "- we never run the deploy without a green build; the user should always call review before a push.\n" +
		"- prefer to tell the team about a flaky test, and keep notes from each session in the runbook.\n"
	for name, size := range map[string]int{"2KB": 2_000, "250KB": 250_000} {
		for kind, text := range map[string]string{"topic": string(src), "prose": prose} {
			content := strings.Repeat(text, size/len(text)+1)[:size]
			b.Run(name+"/"+kind, func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					(Checker{}).CheckEntry("project_billing_migration.md", content)
				}
			})
		}
	}
}
