DROP TABLE dreams;
