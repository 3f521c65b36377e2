package transcript

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// genTranscript is an io.Reader producing a synthetic transcript of at least target bytes,
// generated a cycle at a time so that the test holds no file. Each cycle is a prompt, an
// assistant reply streamed as two records (text, then an Edit call), and the tool result;
// every 100th cycle adds a sidechain record, and cycle 7 carries a 2 MiB tool result.
type genTranscript struct {
	target, produced int64
	cycles           int
	pending          []byte
	// sample is called every sampleEvery bytes with the bytes produced so far.
	sample      func(produced int64)
	nextSample  int64
	sampleEvery int64
}

var (
	genFiller = strings.Repeat("lorem ipsum dolor sit amet ", 40)    // ~1 KiB of reply text
	genResult = strings.Repeat("result line of tool output\\n", 150) // ~4 KiB tool result
	genHuge   = strings.Repeat("x", 2<<20)
)

// Read implements io.Reader.
func (g *genTranscript) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.produced >= g.target {
			return 0, io.EOF
		}
		g.pending = g.cycle(g.pending[:0])
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	g.produced += int64(n)
	if g.sample != nil && g.produced >= g.nextSample {
		g.sample(g.produced)
		g.nextSample += g.sampleEvery
	}
	return n, nil
}

// cycle appends the lines of the next cycle to b.
func (g *genTranscript) cycle(b []byte) []byte {
	i := g.cycles
	g.cycles++
	ts := fmt.Sprintf("2025-01-01T%02d:%02d:%02d.000Z", i/3600%24, i/60%60, i%60)
	common := fmt.Sprintf(`"sessionId":"0a1b2c3d-4e5f-4061-8071-2a3b4c5d6e7f","cwd":"/w","version":"2.1.0","timestamp":%q`, ts)
	b = fmt.Appendf(b, `{"type":"user","uuid":"u%d",%s,"message":{"role":"user","content":"prompt %d: %s"}}`+"\n",
		i, common, i, genFiller[:200])
	b = fmt.Appendf(b, `{"type":"assistant","uuid":"a%d","parentUuid":"u%d",%s,"message":{"id":"m%d","role":"assistant","model":"claude-x","content":[{"type":"text","text":%q}],"usage":{"input_tokens":1,"output_tokens":2}}}`+"\n",
		i, i, common, i, genFiller)
	b = fmt.Appendf(b, `{"type":"assistant","uuid":"b%d","parentUuid":"a%d",%s,"message":{"id":"m%d","role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"Edit","input":{"file_path":"/w/f%d.go","old_string":"a\nb\nc","new_string":"a\nb\nc\nd\ne\n"}}]}}`+"\n",
		i, i, common, i, i, i)
	result := genResult
	if i == 7 {
		result = genHuge
	}
	b = fmt.Appendf(b, `{"type":"user","uuid":"r%d","parentUuid":"b%d",%s,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"%s"}]},"toolUseResult":{"stdout":"%s"}}`+"\n",
		i, i, common, i, result, genResult[:100])
	if i%100 == 0 {
		b = fmt.Appendf(b, `{"type":"assistant","uuid":"s%d","isSidechain":true,"agentId":"a0123456789abcdef",%s,"message":{"id":"sm%d","role":"assistant","content":[{"type":"text","text":"side"}]}}`+"\n",
			i, common, i)
	}
	return b
}

func TestSummarizeBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generates a 100 MB transcript")
	}
	const (
		size     = 100 << 20
		maxHeap  = 32 << 20
		sampleMB = 4 << 20
	)
	var peak uint64
	var ms runtime.MemStats
	gen := &genTranscript{target: size, sampleEvery: sampleMB, nextSample: sampleMB, sample: func(int64) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}}
	runtime.GC()

	sum, err := SummarizeReader(gen)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d MB in %d cycles, peak heap in use %.1f MB", gen.produced>>20, gen.cycles, float64(peak)/(1<<20))
	if peak == 0 || peak > maxHeap {
		t.Errorf("peak heap in use %d bytes, want below %d while reading %d", peak, maxHeap, gen.produced)
	}

	n := gen.cycles
	side := (n + 99) / 100
	want := Summary{Records: 4*n + side, UserMessages: 2 * n, AssistantMessages: n + side, Prompts: n, Sidechain: side}
	got := Summary{Records: sum.Records, UserMessages: sum.UserMessages, AssistantMessages: sum.AssistantMessages,
		Prompts: sum.Prompts, Sidechain: sum.Sidechain}
	if !summaryCountsEqual(got, want) || sum.Read.Lines != 4*n+side || sum.Read.Malformed != 0 || sum.Read.Oversized != 0 {
		t.Errorf("counts %+v read %+v, want %+v", got, sum.Read, want)
	}
	tools := sum.Tools
	if tools.Uses != n || tools.Answered != n || tools.Unanswered != 0 || tools.Edits != n ||
		tools.LinesAdded != 5*n || tools.LinesRemoved != 3*n {
		t.Errorf("tools = %+v", tools)
	}
}

// summaryCountsEqual compares the scalar counts of two summaries.
func summaryCountsEqual(a, b Summary) bool {
	return a.Records == b.Records && a.UserMessages == b.UserMessages && a.AssistantMessages == b.AssistantMessages &&
		a.Prompts == b.Prompts && a.Sidechain == b.Sidechain
}

func TestOversizedLineMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generates a 48 MiB line")
	}
	// A line over the cap is skipped without being buffered.
	line := strings.NewReader(`{"type":"user","message":{"role":"user","content":"` + strings.Repeat("z", 48<<20) + `"}}` + "\n")
	input := io.MultiReader(line, strings.NewReader(userLine+"\n"))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	rd := NewReader(input)
	rd.SetMaxLineSize(1 << 20)
	recs, stats := mustReadAll(t, rd)
	runtime.ReadMemStats(&ms)
	if len(recs) != 1 || stats.Oversized != 1 {
		t.Fatalf("records %d, stats %+v", len(recs), stats)
	}
	if alloc := ms.TotalAlloc - before; alloc > 8<<20 {
		t.Errorf("allocated %d bytes to skip a 48 MiB line", alloc)
	}
}
