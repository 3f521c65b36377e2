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

// TestHeadsCacheSpaceHeads: a space head is found by its key while fresh,
// a space of another user or scope is another key, an older version
// announced elsewhere keeps it and a newer one drops it, and Reset forgets
// space heads with the entry heads. A nil cache keeps nothing.
func TestHeadsCacheSpaceHeads(t *testing.T) {
	c := NewHeadsCache(5)
	now := time.Now()
	p := Principal{Org: Org{ID: 1}, User: User{ID: 9}}
	team, mine := SpaceKeyOf(p, "o/r", ScopeTeam), SpaceKeyOf(p, "o/r", ScopePersonal)
	if team == mine || mine.User != 9 || team.User != 0 {
		t.Fatalf("keys: team %+v, personal %+v", team, mine)
	}
	c.PutHead(team, Repo{ID: 2}, Space{ID: 7, Version: 4}, now)
	if _, _, ok := c.Head(mine, now); ok {
		t.Fatal("the personal space was served the team space's head")
	}
	if repo, sp, ok := c.Head(team, now); !ok || repo.ID != 2 || sp.Version != 4 {
		t.Fatalf("Head = %v %v %v", repo, sp, ok)
	}
	if _, _, ok := c.Head(team, now.Add(HeadTTL)); ok {
		t.Fatal("an expired head was served")
	}
	c.SpaceMoved(team, 4)
	if _, _, ok := c.Head(team, now); !ok {
		t.Fatal("the cached version's own announcement dropped it")
	}
	c.SpaceMoved(team, 5)
	if _, _, ok := c.Head(team, now); ok {
		t.Fatal("a newer version elsewhere left the head cached")
	}
	c.PutHead(team, Repo{ID: 2}, Space{ID: 7, Version: 5}, now)
	c.Put(Space{ID: 7, Version: 5}, map[string]Entry{})
	c.Reset()
	if _, _, ok := c.Head(team, now); ok {
		t.Fatal("Reset kept a space head")
	}
	var none *HeadsCache
	none.PutHead(team, Repo{}, Space{ID: 7}, now)
	none.CorrectHead(team, Repo{}, Space{ID: 7}, now)
	none.SpaceMoved(team, 1)
	if _, _, ok := none.Head(team, now); ok {
		t.Fatal("a nil cache served a head")
	}
}
