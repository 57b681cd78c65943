package service

import "context"

// WaitExternalReply exposes waitExternalReply to the external tests (package service_test).
func (s *Service) WaitExternalReply(ctx context.Context, sessionID string, afterSeq int64) (string, error) {
	return s.waitExternalReply(ctx, sessionID, afterSeq)
}
