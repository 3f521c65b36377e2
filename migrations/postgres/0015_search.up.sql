-- Full-text search over live entries (issue 25 point 4), with Postgres's own full-text
-- search. search is the key and content of a live entry as a tsvector of the 'simple'
-- configuration (no stemming and no stop words: memory is code, names and many
-- languages), its words cut at every punctuation character as SQLite's unicode61 tokenizer
-- cuts them (the default parser would keep "notes/go.md", a host or a hyphenated word
-- whole, so that "go" would not find it; [:punct:], unlike [:alnum:], never takes a letter
-- for something else under the C collation), plus two lexemes no word of the text can be:
-- "~org" and the org's id, "~s" and the space's id. A search of one org, or of one repo's
-- spaces, intersects their posting lists in the index instead of filtering every match.
-- Generated columns are written in the transaction of every write; a tombstone has none.
-- The scrub that follows an erasure rewrites entries, and with it this column and index.
ALTER TABLE entries ADD COLUMN search tsvector GENERATED ALWAYS AS (
    CASE WHEN NOT deleted AND content IS NOT NULL THEN
        to_tsvector('simple', regexp_replace(key || ' ' || content, '[[:punct:]]+', ' ', 'g'))
            || ('''~org' || org_id::text || ''' ''~s' || space_id::text || '''')::tsvector
    END) STORED;
CREATE INDEX entries_search ON entries USING gin (search);
