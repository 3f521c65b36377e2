package teammem

import (
	"strings"
	"testing"
)

func TestParseDreamCreate(t *testing.T) {
	const store = `{"type":"memory_store","memory_store_id":"memstore_ab12"}`
	long := strings.Repeat("é", MaxDreamInstructions)
	ok := []struct {
		body string
		want DreamSpec
	}{
		{`{"inputs":[` + store + `],"model":"m"}`, DreamSpec{InputStoreUID: "ab12", Model: "m", ModelSpeed: "standard", Behavior: DreamCreateNew}},
		{`{"inputs":[` + store + `,{"type":"sessions","session_ids":["sesn_b","sesn_a"]}],"model":{"id":"m","speed":"standard"},"instructions":"` + long + `",
		  "output_behavior":{"type":"update_existing","memory_store_id":"memstore_ab12"}}`,
			DreamSpec{InputStoreUID: "ab12", HasSessions: true, SessionIDs: []string{"sesn_a", "sesn_b"}, Model: "m", ModelSpeed: "standard",
				Instructions: long, Behavior: DreamUpdateExisting}},
		{`{"inputs":[` + store + `],"model":{"id":"m"},"output_behavior":{"type":"create_new"}}`, DreamSpec{InputStoreUID: "ab12", Model: "m", ModelSpeed: "standard", Behavior: DreamCreateNew}},
	}
	for _, c := range ok {
		got, err := ParseDreamCreate([]byte(c.body))
		if err != nil || got.InputStoreUID != c.want.InputStoreUID || strings.Join(got.SessionIDs, ",") != strings.Join(c.want.SessionIDs, ",") ||
			got.Model != c.want.Model || got.Behavior != c.want.Behavior || got.Instructions != c.want.Instructions || got.HasSessions != c.want.HasSessions {
			t.Errorf("ParseDreamCreate(%.80s) = %+v, %v", c.body, got, err)
		}
	}
	bad := map[string]string{
		`{"inputs":[],"model":"m"}`:                                                                                           "exactly one memory_store",
		`{"inputs":[` + store + `,` + store + `],"model":"m"}`:                                                                "exactly one memory_store",
		`{"inputs":[` + store + `]}`:                                                                                          "model is required",
		`{"inputs":[` + store + `],"model":5}`:                                                                                "model must be",
		`{"inputs":[` + store + `],"model":{"id":"m","speed":"fast"}}`:                                                        "standard",
		`{"inputs":[` + store + `],"model":{"id":"m","x":1}}`:                                                                 "unknown field",
		`{"inputs":[` + store + `],"model":"m","instructions":""}`:                                                            "instructions must be 1 to 4096",
		`{"inputs":[` + store + `],"model":"m","instructions":"` + long + `x"}`:                                               "instructions must be 1 to 4096",
		`{"inputs":[` + store + `],"model":"m","extra":1}`:                                                                    "unknown field",
		`{"inputs":"x","model":"m"}`:                                                                                          "inputs must be an array",
		`{"inputs":[{"type":"memory_store","memory_store_id":"nope"}],"model":"m"}`:                                           "memory_store_id",
		`{"inputs":[{"type":"other"}],"model":"m"}`:                                                                           "memory_store or sessions",
		`{"inputs":[` + store + `,{"type":"sessions","session_ids":[]}],"model":"m"}`:                                         "1 to 100",
		`{"inputs":[` + store + `,{"type":"sessions","session_ids":["x"]}],"model":"m"}`:                                      "sesn_",
		`{"inputs":[` + store + `,{"type":"sessions","session_ids":["sesn_a","sesn_a"]}],"model":"m"}`:                        "repeat",
		`{"inputs":[` + store + `],"model":"m","output_behavior":{"type":"update_existing","memory_store_id":"memstore_ff"}}`: "input memory store",
		`{"inputs":[` + store + `],"model":"m","output_behavior":{"type":"replace"}}`:                                         "create_new or update_existing",
		`not json`: "not valid JSON",
	}
	for body, want := range bad {
		_, err := ParseDreamCreate([]byte(body))
		if ErrorCode(err) != EInvalid || !strings.Contains(ErrorMessage(err), want) {
			t.Errorf("ParseDreamCreate(%.80s) = %v, want EInvalid with %q", body, err, want)
		}
	}
	many := make([]string, MaxDreamSessions+1)
	for i := range many {
		many[i] = `"sesn_` + strings.Repeat("a", i+1) + `"`
	}
	if _, err := ParseDreamCreate([]byte(`{"inputs":[` + store + `,{"type":"sessions","session_ids":[` + strings.Join(many, ",") + `]}],"model":"m"}`)); ErrorCode(err) != EInvalid {
		t.Errorf("101 sessions: %v", err)
	}
}
