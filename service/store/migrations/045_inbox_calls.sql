-- A call of a task's run waiting for approval, kept with its Inbox item so
-- that it outlives the process that held it (service/tasks): the call as
-- JSON ({tool, arguments}) and the task's deadline for it.
ALTER TABLE inbox ADD COLUMN call TEXT NOT NULL DEFAULT '';
ALTER TABLE inbox ADD COLUMN deadline TEXT NOT NULL DEFAULT '';
