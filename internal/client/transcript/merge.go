package transcript

// maxStreams bounds the Merger's per-stream state; past it the state is reset, which at
// worst splits one logical message in two.
const maxStreams = 1024

// streamKey identifies an independent run of assistant records: the main chain, or one
// subagent's sidechain. Old Claude Code versions inlined subagents as sidechain records
// without agentId; they share one stream.
type streamKey struct {
	sidechain bool
	agentID   string
}

// streamHead is the latest logical assistant message of a stream.
type streamHead struct {
	messageID string
	group     int
}

// Merger groups streamed assistant records into logical messages. Claude Code writes one
// record per content block, all sharing the response's message.id; a record continues the
// previous logical message when the previous assistant record of the same stream (same
// isSidechain and agentId) has the same non-empty message.id. Records of other types in
// between (tool results, attachments) do not break a group. The zero Merger is ready to use.
type Merger struct {
	heads  map[streamKey]streamHead
	groups int
}

// Group assigns an assistant record to a logical message. group numbers logical messages
// 1, 2, ... in order of their first record; continued reports that rec joins the group of
// an earlier record. Records of other types are ignored and get group 0.
func (m *Merger) Group(rec *Record) (group int, continued bool) {
	if rec.Type != TypeAssistant {
		return 0, false
	}
	if m.heads == nil || len(m.heads) >= maxStreams {
		m.heads = make(map[streamKey]streamHead)
	}
	key := streamKey{rec.IsSidechain, rec.AgentID}
	if h, ok := m.heads[key]; ok && rec.MessageID != "" && h.messageID == rec.MessageID {
		return h.group, true
	}
	m.groups++
	m.heads[key] = streamHead{messageID: rec.MessageID, group: m.groups}
	return m.groups, false
}

// Merge returns recs with each logical assistant message collapsed into one record, in
// order of first appearance. The merged record keeps the fields of its first part (uuid,
// timestamp, parentUuid) and the content blocks of all parts in order. Other records are
// returned unchanged; recs itself is not modified.
func Merge(recs []Record) []Record {
	var m Merger
	out := make([]Record, 0, len(recs))
	at := make(map[int]int) // group -> index in out
	for i := range recs {
		group, continued := m.Group(&recs[i])
		if !continued {
			if group != 0 {
				at[group] = len(out)
			}
			out = append(out, recs[i])
			continue
		}
		head := &out[at[group]]
		content := make([]Block, 0, len(head.Content)+len(recs[i].Content))
		head.Content = append(append(content, head.Content...), recs[i].Content...)
	}
	return out
}
