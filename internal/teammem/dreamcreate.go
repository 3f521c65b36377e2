package teammem

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The bounds of a create request (issue 24 point 7).
const (
	MaxDreamSessions     = 100
	MaxDreamInstructions = 4096 // characters
	maxSessionIDBytes    = 128
)

// DreamSpec is a validated create request: what the caller asked for,
// before any store is looked up.
type DreamSpec struct {
	InputStoreUID string
	// HasSessions reports whether the request had a sessions entry;
	// SessionIDs are its ids, sorted.
	HasSessions  bool
	SessionIDs   []string
	Model        string
	ModelSpeed   string
	Instructions string
	Behavior     DreamBehavior
}

// dreamCreateBody is the request body as the SDKs send it.
type dreamCreateBody struct {
	Inputs         []json.RawMessage `json:"inputs"`
	Model          json.RawMessage   `json:"model"`
	Instructions   *string           `json:"instructions"`
	OutputBehavior json.RawMessage   `json:"output_behavior"`
}

type dreamInputBody struct {
	Type          string   `json:"type"`
	MemoryStoreID string   `json:"memory_store_id"`
	SessionIDs    []string `json:"session_ids"`
}

type dreamModelBody struct {
	ID    string `json:"id"`
	Speed string `json:"speed"`
}

type dreamBehaviorBody struct {
	Type          string `json:"type"`
	MemoryStoreID string `json:"memory_store_id"`
}

func invalidf(format string, args ...any) error { return Errorf(EInvalid, format, args...) }

// strictJSON decodes data into v refusing unknown fields, wrong types and
// trailing data, naming what for in the message.
func strictJSON(data []byte, v any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalidf("%s: %s", what, jsonProblem(err))
	}
	if dec.More() {
		return invalidf("%s: unexpected data after the JSON value", what)
	}
	return nil
}

// jsonProblem says what was wrong with a body without echoing it.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return te.Field + " must be " + jsonKind(te.Type.Kind().String())
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return "the body is not valid JSON of the expected shape"
}

func jsonKind(k string) string {
	switch k {
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "a " + k
}

// ParseDreamCreate validates the body of POST /v1/dreams with the SDKs'
// rules: exactly one memory_store input and at most one sessions input
// (1–100 distinct sesn_ ids; leaving it out is teammem's extension), a
// model as a string or {id, speed: "standard"}, instructions of 1–4,096
// characters when given, and output_behavior create_new (the default) or
// update_existing naming the input store. EInvalid otherwise.
func ParseDreamCreate(body []byte) (DreamSpec, error) {
	var b dreamCreateBody
	var spec DreamSpec
	if err := strictJSON(body, &b, "dream"); err != nil {
		return spec, err
	}
	if err := spec.parseInputs(b.Inputs); err != nil {
		return spec, err
	}
	if err := spec.parseModel(b.Model); err != nil {
		return spec, err
	}
	if b.Instructions != nil {
		n := utf8.RuneCountInString(*b.Instructions)
		if !utf8.ValidString(*b.Instructions) || n < 1 || n > MaxDreamInstructions {
			return spec, invalidf("instructions must be 1 to %d characters", MaxDreamInstructions)
		}
		spec.Instructions = *b.Instructions
	}
	return spec, spec.parseBehavior(b.OutputBehavior)
}

func (spec *DreamSpec) parseInputs(inputs []json.RawMessage) error {
	stores := 0
	for i, raw := range inputs {
		var in dreamInputBody
		if err := strictJSON(raw, &in, "inputs["+strconv.Itoa(i)+"]"); err != nil {
			return err
		}
		switch in.Type {
		case "memory_store":
			uid, ok := StoreUID(in.MemoryStoreID)
			if !ok || in.SessionIDs != nil {
				return invalidf("inputs[%d]: a memory_store input needs a memory_store_id (memstore_…) and nothing else", i)
			}
			stores++
			spec.InputStoreUID = uid
		case "sessions":
			if spec.HasSessions || in.MemoryStoreID != "" {
				return invalidf("inputs must hold at most one sessions entry, with session_ids only")
			}
			ids, err := dreamSessionIDs(in.SessionIDs)
			if err != nil {
				return err
			}
			spec.HasSessions, spec.SessionIDs = true, ids
		default:
			return invalidf("inputs[%d].type must be memory_store or sessions", i)
		}
	}
	if stores != 1 {
		return invalidf("inputs must hold exactly one memory_store entry")
	}
	return nil
}

// dreamSessionIDs checks a sessions input's ids and sorts them.
func dreamSessionIDs(ids []string) ([]string, error) {
	if len(ids) < 1 || len(ids) > MaxDreamSessions {
		return nil, invalidf("session_ids must hold 1 to %d session ids", MaxDreamSessions)
	}
	out := slices.Clone(ids)
	slices.Sort(out)
	for i, id := range out {
		rest, ok := strings.CutPrefix(id, "sesn_")
		if !ok || rest == "" || len(id) > maxSessionIDBytes || !isIDChars(rest) {
			return nil, invalidf("session_ids must be session ids (sesn_…)")
		}
		if i > 0 && out[i-1] == id {
			return nil, invalidf("session_ids must not repeat a session id")
		}
	}
	return out, nil
}

func isIDChars(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (spec *DreamSpec) parseModel(raw json.RawMessage) error {
	const msg = `model must be a model id or {"id": …, "speed": "standard"}`
	trimmed := bytes.TrimSpace(raw)
	switch {
	case len(trimmed) == 0 || string(trimmed) == "null":
		return invalidf("model is required")
	case trimmed[0] == '"':
		if err := json.Unmarshal(trimmed, &spec.Model); err != nil {
			return invalidf("%s", msg)
		}
	case trimmed[0] == '{':
		var m dreamModelBody
		if err := strictJSON(trimmed, &m, "model"); err != nil {
			return err
		}
		if m.Speed != "" && !DreamModelSpeedValid(m.Speed) {
			return invalidf(`model.speed can only be "standard"`)
		}
		spec.Model = m.ID
	default:
		return invalidf("%s", msg)
	}
	if spec.Model == "" || len(spec.Model) > 256 || !utf8.ValidString(spec.Model) {
		return invalidf("model id must be 1 to 256 bytes of UTF-8")
	}
	spec.ModelSpeed = DreamSpeedStandard
	return nil
}

func (spec *DreamSpec) parseBehavior(raw json.RawMessage) error {
	spec.Behavior = DreamCreateNew
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil
	}
	var b dreamBehaviorBody
	if err := strictJSON(raw, &b, "output_behavior"); err != nil {
		return err
	}
	switch DreamBehavior(b.Type) {
	case DreamCreateNew:
		if b.MemoryStoreID != "" {
			return invalidf("output_behavior create_new takes no memory_store_id")
		}
	case DreamUpdateExisting:
		if b.MemoryStoreID != StoreIDPrefix+spec.InputStoreUID {
			return invalidf("output_behavior update_existing must name the input memory store as its memory_store_id")
		}
		spec.Behavior = DreamUpdateExisting
	default:
		return invalidf("output_behavior.type must be create_new or update_existing")
	}
	return nil
}
