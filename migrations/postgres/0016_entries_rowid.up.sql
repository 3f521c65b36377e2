-- SQLite's entries becomes a rowid table (see sqlite/0016). Postgres keeps rows in heap
-- pages and moves large values out of line itself (TOAST), so nothing changes here, and
-- entries_heads, which lets SQLite read a space's heads without its content, is not needed:
-- a heap row keeps content over about 2 KB out of line already.
SELECT 1;
