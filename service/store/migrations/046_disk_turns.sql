-- Bounded disk, second step (issue 44, after 044).
--
-- A session's turns are found by its id alone: the index holds the session's
-- id and the turn's rowid, not the parent's id as well (035): the versions
-- of a turn are read among the session's turns (branches.go), a few hundred
-- at most, and the parent's id made the index twice the size.
-- Turns that end with their answer no longer keep their own start and end
-- times (finishTurn): those are their messages' times, and Turn reads them
-- there. Turns stored before keep theirs.
DROP INDEX turns_session;
CREATE INDEX turns_session ON turns(session_id);
