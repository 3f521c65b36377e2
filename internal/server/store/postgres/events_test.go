package postgres_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// TestBrokerCarriesEventsBetweenReplicas: two stores on one database, each
// with the broker it declares as an events.Carrier, hear each other's
// publishes through NOTIFY.
func TestBrokerCarriesEventsBetweenReplicas(t *testing.T) {
	t.Parallel()
	dsn := testpg.NewDatabase(t)
	a, b := MustOpen(t, dsn), MustOpen(t, dsn)
	var carrier events.Carrier = a // the capability serve.go asks for
	pub, sub := carrier.Broker(slog.Default()), events.For(b, slog.Default())
	defer pub.Close()
	defer sub.Close()
	ch, cancel := sub.Subscribe(1, "o/r")
	defer cancel()
	want := events.Event{OrgID: 1, Repo: "o/r", Scope: "team", Version: 3, Checksum: "c"}
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond) // until the listener is up
	defer tick.Stop()
	for {
		select {
		case e := <-ch:
			if e.Kind == events.KindReset {
				continue
			}
			if e != want {
				t.Fatalf("heard %+v, want %+v", e, want)
			}
			return
		case <-tick.C:
			if err := pub.Publish(t.Context(), want); err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatal("the other replica never heard the event")
		}
	}
}
