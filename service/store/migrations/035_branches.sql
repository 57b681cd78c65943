-- Branches of a conversation: Regenerate, Retry and Edit start a turn that
-- replaces one already there (a sibling: the same parent), and the session
-- shows, and sends its model, only the branch that ends at its head: the
-- head turn and its parents. A session whose head is '' shows every turn.
-- Existing turns become one branch, each the child of the one before it.
ALTER TABLE turns ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN head_turn_id TEXT NOT NULL DEFAULT '';
CREATE INDEX turns_session ON turns(session_id, parent_id);

UPDATE turns SET parent_id = COALESCE((SELECT p.id FROM turns p
    WHERE p.session_id = turns.session_id AND p.rowid < turns.rowid ORDER BY p.rowid DESC LIMIT 1), '');
UPDATE sessions SET head_turn_id = COALESCE((SELECT t.id FROM turns t
    WHERE t.session_id = sessions.id ORDER BY t.rowid DESC LIMIT 1), '');
