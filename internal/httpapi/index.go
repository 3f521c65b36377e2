package httpapi

import "github.com/teammem/teammem/internal/teammem"

// indexOf returns the MEMORY.md of a space's entries as Claude Code loads
// it (truncated, with the warning when a limit was hit), and whether it was
// rendered from the topic files because the space stores none.
func indexOf(entries []teammem.Entry) (string, bool) {
	topics := make([]teammem.TopicFile, 0, len(entries))
	for _, e := range entries {
		if e.Key == teammem.IndexName {
			return teammem.TruncateIndex(e.Content).Content, false
		}
		topics = append(topics, teammem.TopicFile{Key: e.Key, Content: e.Content})
	}
	return teammem.TruncateIndex(teammem.RenderIndex(topics)).Content, true
}
