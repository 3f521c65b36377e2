package memdir

import "strings"

// gitConfigValue returns the first value of section.subsection.key in a git
// config file's text, following git's own syntax: section names and keys are
// case-insensitive, the quoted subsection is case-sensitive (the legacy
// [section.sub] form is lowercased whole, as git does), values may be quoted,
// hold \n \t \b \\ \" escapes and backslash-newline continuations, and end at
// an unquoted '#' or ';' comment with trailing blanks trimmed.
//
// Unlike git, which refuses a malformed file, the parser skips a bad line and
// carries on, as Claude Code's does; entries in a broken section header never
// match. A key without "=" (a boolean) never matches either.
func gitConfigValue(text, section, subsection, key string) (string, bool) {
	want := strings.ToLower(section) + "." + subsection + "." + strings.ToLower(key)
	p := &cfgParser{s: strings.TrimPrefix(text, "\uFEFF")}
	base := ""
	for {
		c, eof := p.next()
		switch {
		case eof:
			return "", false
		case c == '\n' || isCfgSpace(c):
			continue
		case c == '#' || c == ';':
			p.skipLine()
		case c == '[':
			var ok bool
			if base, ok = p.sectionHeader(); !ok {
				base = "" // never matches: names always hold a '.'
				p.skipLine()
			}
		case isAlpha(c):
			name, value, ok := p.entry(c)
			if ok && base != "" && base+"."+name == want {
				return value, true
			}
		default:
			p.skipLine()
		}
	}
}

// cfgParser reads a git config text byte by byte; "\r\n" reads as '\n' and
// the end of the text as a final '\n'.
type cfgParser struct {
	s string
	i int
}

func (p *cfgParser) next() (c byte, eof bool) {
	if p.i >= len(p.s) {
		p.i = len(p.s) + 1 // reading past the end stays at eof
		return '\n', true
	}
	c = p.s[p.i]
	p.i++
	if c == '\r' && p.i < len(p.s) && p.s[p.i] == '\n' {
		p.i++
		c = '\n'
	}
	return c, false
}

// skipLine consumes the rest of the current line.
func (p *cfgParser) skipLine() {
	for {
		if c, eof := p.next(); eof || c == '\n' {
			return
		}
	}
}

// sectionHeader parses what follows '[' and returns the lowercased section
// name, followed by "." and the subsection when there is one.
func (p *cfgParser) sectionHeader() (string, bool) {
	var name strings.Builder
	for {
		c, eof := p.next()
		switch {
		case eof || c == '\n':
			p.i-- // let the caller's skipLine see the newline
			return "", false
		case c == ']':
			return name.String(), name.Len() > 0
		case isCfgSpace(c):
			return p.subsection(name.String())
		case isKeyChar(c) || c == '.':
			name.WriteByte(toLower(c))
		default:
			return "", false
		}
	}
}

// subsection parses ` "sub"]` after a section name.
func (p *cfgParser) subsection(section string) (string, bool) {
	c, _ := p.next()
	for isCfgSpace(c) {
		c, _ = p.next()
	}
	if c != '"' || section == "" {
		p.i--
		return "", false
	}
	var sub strings.Builder
	for {
		c, eof := p.next()
		if eof || c == '\n' {
			p.i--
			return "", false
		}
		if c == '"' {
			break
		}
		if c == '\\' {
			if c, eof = p.next(); eof || c == '\n' {
				p.i--
				return "", false
			}
		}
		sub.WriteByte(c)
	}
	if c, _ := p.next(); c != ']' {
		p.i--
		return "", false
	}
	return section + "." + sub.String(), true
}

// entry parses a "key = value" line whose first key character is first.
// Boolean keys (no '=') and malformed values report false.
func (p *cfgParser) entry(first byte) (name, value string, ok bool) {
	var b strings.Builder
	b.WriteByte(toLower(first))
	c, eof := p.next()
	for !eof && isKeyChar(c) {
		b.WriteByte(toLower(c))
		c, eof = p.next()
	}
	for c == ' ' || c == '\t' {
		c, eof = p.next()
	}
	switch {
	case eof || c == '\n':
		return b.String(), "", false
	case c != '=':
		p.skipLine()
		return "", "", false
	}
	value, ok = p.value()
	return b.String(), value, ok
}

// value parses a value up to and including the end of its (last) line.
func (p *cfgParser) value() (string, bool) {
	var v []byte
	quoted, comment, trim := false, false, -1
	for {
		c, eof := p.next()
		if eof || c == '\n' {
			if quoted {
				return "", false // unterminated quote
			}
			if trim >= 0 {
				v = v[:trim]
			}
			return string(v), true
		}
		switch {
		case comment:
			continue
		case isCfgSpace(c) && !quoted:
			if trim < 0 {
				trim = len(v)
			}
			if len(v) > 0 { // leading blanks are dropped
				v = append(v, c)
			}
			continue
		case !quoted && (c == '#' || c == ';'):
			comment = true
			continue
		}
		trim = -1
		switch c {
		case '\\':
			e, eof := p.next()
			switch {
			case eof:
				return "", false
			case e == '\n':
				continue // line continuation
			case e == 't':
				v = append(v, '\t')
			case e == 'b':
				v = append(v, '\b')
			case e == 'n':
				v = append(v, '\n')
			case e == '\\' || e == '"':
				v = append(v, e)
			default:
				p.skipLine() // git rejects unknown escapes
				return "", false
			}
		case '"':
			quoted = !quoted
		default:
			v = append(v, c)
		}
	}
}

func isCfgSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isKeyChar(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' || c == '-' }

func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
