DROP INDEX api_keys_prefix;
