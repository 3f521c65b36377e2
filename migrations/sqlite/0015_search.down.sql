DROP TRIGGER entries_search_delete;
DROP TRIGGER entries_search_update;
DROP TRIGGER entries_search_insert;
DROP TABLE entry_fts;
DROP TABLE entry_search;
