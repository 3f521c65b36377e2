ALTER TABLE entries DROP COLUMN overlap;
