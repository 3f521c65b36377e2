package poison

// confusables maps letters of other scripts that render like a Latin
// letter, and punctuation that renders like ASCII punctuation, to that
// ASCII character, lower case. It is written from the scripts' letter
// shapes: the Cyrillic, Greek and Armenian letters (both cases) that
// common fonts draw like a Latin letter, a few Latin letters outside
// ASCII with the same look, and the typographic quotes, dashes and
// vertical bars. Compatibility forms (fullwidth and mathematical letters,
// ligatures, the Kelvin sign) are not here: NFKD decomposition folds those
// (normalize.go).
var confusables = map[rune]byte{
	// Cyrillic capitals
	'А': 'a', 'В': 'b', 'С': 'c', 'Е': 'e', 'Н': 'h', 'І': 'i', 'Ј': 'j', 'К': 'k', 'М': 'm',
	'О': 'o', 'Р': 'p', 'Ѕ': 's', 'Т': 't', 'Х': 'x', 'У': 'y', 'Ү': 'y', 'Ԁ': 'd', 'Ԛ': 'q',
	'Ԝ': 'w', 'Ӏ': 'l',
	// Cyrillic small letters
	'а': 'a', 'в': 'b', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'һ': 'h', 'і': 'i', 'ј': 'j', 'к': 'k',
	'м': 'm', 'о': 'o', 'р': 'p', 'ԛ': 'q', 'ѕ': 's', 'т': 't', 'у': 'y', 'ү': 'y', 'х': 'x',
	'ԝ': 'w', 'ӏ': 'l', 'п': 'n', 'г': 'r',
	// Greek capitals
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'i', 'Κ': 'k', 'Μ': 'm', 'Ν': 'n',
	'Ο': 'o', 'Ρ': 'p', 'Τ': 't', 'Υ': 'y', 'Χ': 'x', 'Ϲ': 'c', 'Ϳ': 'j',
	// Greek small letters
	'α': 'a', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u',
	'χ': 'x', 'ϲ': 'c', 'ϳ': 'j', 'η': 'n', 'ω': 'w',
	// Armenian
	'օ': 'o', 'ո': 'n', 'ս': 'u', 'հ': 'h', 'ց': 'g', 'զ': 'q',
	// Latin letters outside ASCII that look like ASCII ones
	'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɡ': 'g', 'ɩ': 'i', 'ʏ': 'y', 'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c',
	'ᴅ': 'd', 'ᴇ': 'e', 'ɢ': 'g', 'ʜ': 'h', 'ɪ': 'i', 'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm',
	'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w',
	'ᴢ': 'z', 'ſ': 's',
	// punctuation
	'‘': '\'', '’': '\'', 'ʼ': '\'', '′': '\'', '“': '"', '”': '"', '″': '"',
	'‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '―': '-', '−': '-', '∣': '|', '│': '|',
	'ǀ': '|', '⁄': '/', '∕': '/',
}
