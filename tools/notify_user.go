package tools

import "context"

// NotifyUser shows a desktop notification from Jarvis itself ("the reply is
// ready"), with the notify tool's helper. It is not a tool call: the model
// chose none of it, so it neither passes the gate nor names a sender.
func (e *Executor) NotifyUser(ctx context.Context, title, body string) error {
	_, err := e.helper(ctx, e.notifyArgv(title, body), "")
	return err
}
