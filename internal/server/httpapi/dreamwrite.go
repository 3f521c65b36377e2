package httpapi

import (
	"context"

	"github.com/teammem/teammem/internal/teammem"
)

// apiDream names the writes of dreams (the worker's, and an Apply's) in
// metrics, versions and audit.
const apiDream = "dream"

// WriteDream commits a dream worker's write through the one write path,
// as a request's write does (metrics, audit, the memory store cache kept
// true), but without the creator key's rate limit: the dream was admitted
// once, when it was created, and its model's writes are bounded by the
// dream's token budget instead. call.API is set to "dream".
func (s *Server) WriteDream(ctx context.Context, call teammem.WriteCall) (teammem.WriteResult, error) {
	call.API = apiDream
	return s.commit(ctx, call)
}
