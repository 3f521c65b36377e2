package console

import (
	"bytes"
	"html"
	"html/template"
	"net/url"
	"path"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Memory content is hostile input: anyone who can write a team memory can
// put anything in it. The renderer never emits raw HTML (goldmark's
// default: it is replaced by a comment), has no attribute syntax, and the
// link guard below lets only http, https and mailto links through and
// shows no image at all; relative links to other memory files become links to
// their console page. The page's Content-Security-Policy forbids script
// and remote images besides.

// renderMarkdown renders an entry's body as HTML. key and repo place its
// relative links.
func renderMarkdown(repo, key, body string) template.HTML {
	md := goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkGuard{repo: repo, key: key}, 100))),
	)
	var buf bytes.Buffer
	if err := md.Convert([]byte(body), &buf); err != nil {
		return template.HTML(template.HTMLEscapeString(body))
	}
	// goldmark escapes text and attributes and emits no raw HTML; the
	// output is trusted as HTML for that reason only.
	return template.HTML(buf.String()) //nolint:gosec // see above
}

// linkGuard rewrites or drops the links and images of a document.
type linkGuard struct{ repo, key string }

// Transform implements parser.ASTTransformer.
func (g linkGuard) Transform(doc *ast.Document, reader text.Reader, _ parser.Context) {
	src := reader.Source()
	var unsafe []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			// Checked as the browser will read it, entities resolved.
			dest, ok := g.linkTarget(html.UnescapeString(string(l.Destination)))
			if !ok {
				unsafe = append(unsafe, n)
			}
			l.Destination = []byte(dest)
		case *ast.Image:
			// Never shown: a remote image in a memory file is a beacon
			// that tells its author who reads it, and when.
			unsafe = append(unsafe, l)
		case *ast.AutoLink:
			if u := string(l.URL(src)); !webURL(u) && !strings.HasPrefix(strings.ToLower(u), "mailto:") && l.AutoLinkType != ast.AutoLinkEmail {
				unsafe = append(unsafe, n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range unsafe {
		unlink(n, src)
	}
}

// unlink replaces a link or image by its text, marked as removed.
func unlink(n ast.Node, src []byte) {
	parent := n.Parent()
	if parent == nil {
		return
	}
	em := ast.NewEmphasis(1)
	if al, ok := n.(*ast.AutoLink); ok {
		em.AppendChild(em, ast.NewString(al.Label(src)))
	}
	for ch := n.FirstChild(); ch != nil; {
		next := ch.NextSibling()
		em.AppendChild(em, ch)
		ch = next
	}
	em.AppendChild(em, ast.NewString([]byte(" [link removed]")))
	parent.ReplaceChild(parent, n, em)
}

// linkTarget returns where a link may point, and false when it may not be
// a link at all.
func (g linkGuard) linkTarget(dest string) (string, bool) {
	if hasControl(dest) {
		return "", false
	}
	u, err := url.Parse(dest)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "mailto":
		return dest, true
	case "":
	default:
		return "", false
	}
	if u.Host != "" || strings.HasPrefix(u.Path, "/") || u.Path == "" {
		return dest, u.Host != "" || u.Path == "" // "//host" is http(s); "#x" stays on the page
	}
	target := path.Clean(path.Join(path.Dir(g.key), u.Path))
	if strings.HasPrefix(target, "../") || target == ".." {
		return "", false
	}
	return entryURL(g.repo, target, ""), true
}

// webURL reports whether s is an absolute http or https URL.
func webURL(s string) bool {
	if hasControl(s) {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	scheme := strings.ToLower(u.Scheme)
	return (scheme == "http" || scheme == "https") && u.Host != ""
}

// hasControl reports whether s holds a control character or space, which
// browsers strip from URLs ("java\tscript:").
func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0
}
