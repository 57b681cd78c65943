package app

// The window's Approve on a config file changed outside Jarvis: Info's
// PendingConfig shows what the file would start and where it would
// connect; ApproveConfig approves exactly that content, by its hash.

import (
	"net/http"

	"jarvis/api"
)

// ApproveConfig approves the pending config file content whose hash the
// window showed; the service refuses it when the file changed since.
func (a *App) ApproveConfig(hash string) error {
	ctx, cancel := a.reqCtx()
	defer cancel()
	if err := a.c.Do(ctx, http.MethodPost, "/v1/config/approve", api.ApproveConfigRequest{Hash: hash}, nil); err != nil {
		return friendly(err)
	}
	return nil
}
