package ccsettings

import (
	"strings"
	"testing"
)

// TestObjectKeepsOrder: keys come back in the order written, values as
// written, a set key stays in place and a new one goes last.
func TestObjectKeepsOrder(t *testing.T) {
	o, err := parseObject([]byte(`{"z": 1, "a": {"nested":  [1,2]}, "m": "x"}`))
	if err != nil {
		t.Fatal(err)
	}
	o.set("a", []byte(`true`))
	o.set("new", []byte(`null`))
	o.del("m")
	o.del("absent")
	b, err := o.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"z":1,"a":true,"new":null}`; got != want {
		t.Errorf("object = %s, want %s", got, want)
	}
	if v, ok := o.get("z"); !ok || string(v) != "1" {
		t.Errorf(`get("z") = %s, %v`, v, ok)
	}
}

// TestObjectRepeatedKey: as JSON.parse, a repeated key keeps its first
// position and its last value.
func TestObjectRepeatedKey(t *testing.T) {
	o, err := parseObject([]byte(`{"a": 1, "b": 2, "a": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := o.MarshalJSON(); string(b) != `{"a":3,"b":2}` {
		t.Errorf("object = %s", b)
	}
}

// TestObjectRefusesOtherValues: only a single JSON object parses.
func TestObjectRefusesOtherValues(t *testing.T) {
	for _, data := range []string{`[]`, `"s"`, `1`, `{} {}`, `{"a": 1} x`} {
		if _, err := parseObject([]byte(data)); err == nil {
			t.Errorf("parseObject(%s) succeeded", data)
		}
	}
}

// TestMarshalNoEscape: commands keep their &, < and >, and nesting is
// indented by two spaces as Claude Code writes settings.
func TestMarshalNoEscape(t *testing.T) {
	got := string(marshalNoEscape(map[string]any{"c": "a && b > c", "n": []int{1}}))
	want := "{\n  \"c\": \"a && b > c\",\n  \"n\": [\n    1\n  ]\n}"
	if got != want || strings.HasSuffix(got, "\n") {
		t.Errorf("marshalNoEscape = %q, want %q", got, want)
	}
}
