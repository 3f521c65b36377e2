DROP TABLE scrubs_pending;
