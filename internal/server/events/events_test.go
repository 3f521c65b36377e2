package events

import (
	"log/slog"
	"testing"
)

// carrier is a store that declares it carries events.
type carrier struct{ b Broker }

func (c carrier) Broker(*slog.Logger) Broker { return c.b }

// TestForAsksTheStore: a store that declares the Carrier capability supplies
// the broker; any other store gets an in-process one.
func TestForAsksTheStore(t *testing.T) {
	if _, ok := For(struct{}{}, slog.Default()).(*Local); !ok {
		t.Error("a store without the capability did not get a Local broker")
	}
	own := NewLocal()
	if b := For(carrier{own}, slog.Default()); b != own {
		t.Error("a Carrier's own broker was not used")
	}
}
