package transcript

import (
	"path/filepath"
	"strings"
	"testing"
)

// asst builds an assistant record with one text block.
func asst(uuid, msgID string, sidechain bool, agentID string) Record {
	return Record{Type: TypeAssistant, UUID: uuid, MessageID: msgID, IsSidechain: sidechain, AgentID: agentID,
		Content: []Block{{Kind: BlockText, Text: uuid}}}
}

// summarizeMerged renders merged records as uuid(texts of the merged parts).
func summarizeMerged(recs []Record) string {
	var parts []string
	for _, r := range recs {
		var texts []string
		for _, b := range r.Content {
			texts = append(texts, b.Text)
		}
		parts = append(parts, r.UUID+"("+strings.Join(texts, ",")+")")
	}
	return strings.Join(parts, " ")
}

func TestMerge(t *testing.T) {
	t.Parallel()
	recs := []Record{
		asst("a1", "m1", false, ""),
		{Type: TypeUser, UUID: "u1"}, // a tool result between streamed parts
		asst("a2", "m1", false, ""),
		asst("s1", "m1", true, ""), // same id, other stream: its own message
		asst("a3", "m1", false, ""),
		asst("b1", "m2", false, ""),
		asst("a4", "m1", false, ""), // m1 again after m2: a new message
		asst("n1", "", false, ""),   // records without an id never merge
		asst("n2", "", false, ""),
		asst("x1", "m3", true, "agent1"),
		asst("y1", "m3", true, "agent2"),
		asst("x2", "m3", true, "agent1"),
	}
	want := "a1(a1,a2,a3) u1() s1(s1) b1(b1) a4(a4) n1(n1) n2(n2) x1(x1,x2) y1(y1)"
	if got := summarizeMerged(Merge(recs)); got != want {
		t.Fatalf("Merge =\n%s\nwant\n%s", got, want)
	}
	if len(recs[0].Content) != 1 {
		t.Fatal("Merge modified its input")
	}
}

func TestMergerGroups(t *testing.T) {
	t.Parallel()
	var m Merger
	user := Record{Type: TypeUser}
	steps := []struct {
		rec       Record
		group     int
		continued bool
	}{
		{asst("a1", "m1", false, ""), 1, false},
		{user, 0, false},
		{asst("a2", "m1", false, ""), 1, true},
		{asst("a3", "m2", false, ""), 2, false},
	}
	for i, s := range steps {
		if g, c := m.Group(&s.rec); g != s.group || c != s.continued {
			t.Errorf("step %d: Group = %d, %v; want %d, %v", i, g, c, s.group, s.continued)
		}
	}
}

func TestMergeTestdata(t *testing.T) {
	t.Parallel()
	// 13 assistant records, one block each, make 11 logical messages (two streamed pairs).
	checkMerge(t, tdPath(tdLegacy), 31, 13, 11)
}

func TestMergeFixture(t *testing.T) {
	t.Parallel()
	// 262 assistant records, one block each, make 170 logical messages.
	checkMerge(t, filepath.Join(realTranscripts(t), fxViewer98), 438, 262, 170)
}

// checkMerge merges the transcript at path, of records records of which assistant are
// assistant records with one block each, and checks it yields messages assistant messages.
func checkMerge(t *testing.T, path string, records, assistant, messages int) {
	t.Helper()
	rd, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	recs, _ := mustReadAll(t, rd)
	merged := Merge(recs)
	assistants, blocks := 0, 0
	for _, r := range merged {
		if r.Type == TypeAssistant {
			assistants++
			blocks += len(r.Content)
		}
	}
	if len(recs) != records || len(merged) != records-assistant+messages || assistants != messages || blocks != assistant {
		t.Fatalf("%d records merged into %d, %d assistant messages holding %d blocks; want %d into %d, %d holding %d",
			len(recs), len(merged), assistants, blocks, records, records-assistant+messages, messages, assistant)
	}
}
