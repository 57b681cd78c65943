-- The checkpoint of the files a call changed, taken before it ran (the
-- desktop's undo restores from it). Part of the row's hash when not empty.
ALTER TABLE audit_log ADD COLUMN checkpoint TEXT NOT NULL DEFAULT '';
