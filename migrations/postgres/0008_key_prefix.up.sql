-- A console sign-in with a wrong secret for a real key's display prefix is audited in that key's
-- org: the lookup by prefix needs an index (prefixes are not unique, and not secret).
CREATE INDEX api_keys_prefix ON api_keys (prefix);
