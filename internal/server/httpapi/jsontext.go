package httpapi

import (
	"strconv"
	"unicode/utf8"

	"github.com/teammem/teammem/internal/teammem"
)

// checkJSONText refuses a request body that encoding/json would silently
// repair: bytes that are not UTF-8, and \u escapes of lone UTF-16
// surrogates. Both would turn into U+FFFD, so the server would store text
// the client never sent (and the client's checksum would never match).
func checkJSONText(b []byte) error {
	if !utf8.Valid(b) {
		return teammem.Errorf(teammem.EInvalid, "request body is not valid UTF-8")
	}
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			if i+1 < len(b) && b[i+1] == 'u' {
				if hi, ok := hex4(b, i+2); ok && hi >= 0xd800 && hi <= 0xdfff {
					lo, ok := hex4(b, i+8)
					if hi > 0xdbff || !ok || b[i+6] != '\\' || b[i+7] != 'u' || lo < 0xdc00 || lo > 0xdfff {
						return teammem.Errorf(teammem.EInvalid, "request body holds a lone UTF-16 surrogate escape (\\u%04x)", hi)
					}
					i += 6 // the low half is skipped with the pair
				}
			}
			i++ // the escaped character
		}
	}
	return nil
}

// hex4 parses the four hex digits of a \u escape starting at b[i].
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 32)
	return rune(v), err == nil
}
