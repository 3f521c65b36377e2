package teammem

import "testing"

func TestActorIDs(t *testing.T) {
	const key = "0f8fad5b-d9cb-469f-a165-70867728950e"
	if got := APIKeyActorID(key); got != "apikey_0f8fad5bd9cb469fa16570867728950e" {
		t.Fatalf("APIKeyActorID = %q", got)
	}
	for _, c := range []struct{ in, want string }{
		{APIKeyActorID(key), key},
		{"apikey_0F8FAD5BD9CB469FA16570867728950E", key},
		{key, key},                         // a key id as listed
		{"apikey_short", "apikey_short"},   // not an actor id: left as is
		{"apikey_" + key, "apikey_" + key}, // dashes are not hex
	} {
		if got := KeyIDOf(c.in); got != c.want {
			t.Errorf("KeyIDOf(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if APIKeyActorID("") != "" || UserActorID(0) != "" {
		t.Error("an unknown key or user has an actor id")
	}
	if got := UserActorID(42); got != "user_42" {
		t.Fatalf("UserActorID = %q", got)
	}
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{{"user_42", 42, true}, {"user_042", 0, false}, {"user_", 0, false}, {"user_x", 0, false}, {"user_-1", 0, false}, {"bob", 0, false}} {
		if got, ok := UserIDOf(c.in); got != c.want || ok != c.ok {
			t.Errorf("UserIDOf(%q) = %d %v, want %d %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
