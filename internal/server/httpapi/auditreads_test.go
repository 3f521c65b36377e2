package httpapi_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// TestExportAuditedOncePerHour: a read-only key created an audit row per
// export, without bound. Reads are now audited once an hour per key and
// target; writes still every time.
func TestExportAuditedOncePerHour(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		clock := newTestClock()
		e := newV1Env(t, st, func(c *httpapi.Config) { c.Clock = clock.Now })
		member := e.keys[teammem.RoleMember]
		readOnly := MustExtraKey(t, st, e.org, e.users[teammem.RoleMember], true)
		e.do("PUT", team+"/entries/a.md", member, "a\n").want(t, 200)
		exports := func() int {
			t.Helper()
			evs, err := st.AuditList(context.Background(), e.org.ID, teammem.AuditFilter{Action: "space.export", Limit: 1000})
			if err != nil {
				t.Fatal(err)
			}
			return len(evs)
		}
		for range 20 {
			e.do("GET", team+"/export", readOnly, nil).want(t, 200)
		}
		if n := exports(); n != 1 {
			t.Fatalf("20 exports by one key in a minute: %d audit rows, want 1", n)
		}
		e.do("GET", "/v1/repos/acme/widgets/personal/export", readOnly, nil).want(t, 200)
		e.do("GET", team+"/export", member, nil).want(t, 200)
		if n := exports(); n != 3 {
			t.Fatalf("another target and another key: %d rows, want 3", n)
		}
		clock.Add(59 * time.Minute)
		e.do("GET", team+"/export", readOnly, nil).want(t, 200)
		if n := exports(); n != 3 {
			t.Fatalf("59 minutes later: %d rows, want still 3", n)
		}
		clock.Add(time.Minute)
		e.do("GET", team+"/export", readOnly, nil).want(t, 200)
		if n := exports(); n != 4 {
			t.Fatalf("an hour later: %d rows, want 4", n)
		}
		// Writes are audited every time.
		for i := range 3 {
			e.do("POST", "/v1/org/keys", member, map[string]any{"name": fmt.Sprint("k", i)}).want(t, 201)
		}
		evs, err := st.AuditList(context.Background(), e.org.ID, teammem.AuditFilter{Action: "key.create", Limit: 100})
		if err != nil || len(evs) != 3 {
			t.Fatalf("key.create rows = %d, %v; want 3", len(evs), err)
		}
	})
}
