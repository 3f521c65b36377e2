package teammem

import (
	"fmt"
	"testing"
	"time"
)

func TestHeadsCache(t *testing.T) {
	c := NewHeadsCache(5)
	sp := Space{ID: 1, Version: 3, Checksum: "sha256:x", UpdatedAt: time.UnixMicro(7)}
	heads := map[string]Entry{"a.md": {Key: "a.md"}, "b.md": {Key: "b.md"}}
	c.Put(sp, heads)
	if got, ok := c.Get(sp); !ok || len(got) != 2 {
		t.Fatalf("Get after Put = %v, %v", got, ok)
	}
	for name, moved := range map[string]func(Space) Space{
		"version":  func(s Space) Space { s.Version++; return s },
		"checksum": func(s Space) Space { s.Checksum = "sha256:y"; return s },
		"purge":    func(s Space) Space { s.PurgedThrough = 2; return s },
		"time":     func(s Space) Space { s.UpdatedAt = s.UpdatedAt.Add(time.Microsecond); return s },
	} {
		if _, ok := c.Get(moved(sp)); ok {
			t.Errorf("a space whose %s moved hit the cache", name)
		}
	}
	// Over the bound, other spaces go; the one just put stays.
	for id := int64(2); id <= 4; id++ {
		c.Put(Space{ID: id}, map[string]Entry{fmt.Sprint(id): {}, fmt.Sprint(-id): {}})
		if c.n > c.max {
			t.Fatalf("cache holds %d heads, bound %d", c.n, c.max)
		}
		if _, ok := c.Get(Space{ID: id}); !ok {
			t.Fatalf("space %d just put is gone", id)
		}
	}
	c.Put(Space{ID: 9}, map[string]Entry{"1": {}, "2": {}, "3": {}, "4": {}, "5": {}, "6": {}})
	if _, ok := c.Get(Space{ID: 9}); ok {
		t.Error("heads larger than the whole cache were kept")
	}
	c.Reset()
	if _, ok := c.Get(Space{ID: 4}); ok || c.n != 0 {
		t.Error("Reset kept heads")
	}
	var none *HeadsCache
	none.Put(sp, heads)
	if _, ok := none.Get(sp); ok {
		t.Error("a nil cache returned heads")
	}
}
