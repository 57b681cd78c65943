package roundtable

import (
	"errors"
	"strings"

	"jarvis/service/netguard"
)

// Sentinel errors. The HTTP edge maps them to status codes with errors.Is.
var (
	// ErrInvalidRegistration wraps every *RegistrationError.
	ErrInvalidRegistration = errors.New("roundtable: invalid agent registration")
	// ErrBlockedAddress is returned when a base URL names, or resolves to,
	// an address the service's one check refuses (link-local, metadata,
	// special-purpose: service/netguard); it is netguard.ErrRefused, so a
	// refusal at dial time matches it too.
	ErrBlockedAddress = netguard.ErrRefused
	// ErrInvalidTask is returned by Run for a task without content.
	ErrInvalidTask = errors.New("roundtable: invalid task")
	// ErrInvalidOptions is returned by New for options it cannot use.
	ErrInvalidOptions = errors.New("roundtable: invalid options")
)

// FieldProblem is one reason a registration was refused.
type FieldProblem struct {
	Field   string `json:"field"`
	Problem string `json:"problem"`
}

// RegistrationError lists every problem found in a registration so that the
// caller can report them all at once. It matches ErrInvalidRegistration, and
// also ErrBlockedAddress when the base URL was refused for its address.
type RegistrationError struct {
	Problems []FieldProblem
	blocked  bool
}

func (e *RegistrationError) Error() string {
	parts := make([]string, 0, len(e.Problems))
	for _, p := range e.Problems {
		parts = append(parts, p.Field+": "+p.Problem)
	}
	return "invalid agent registration: " + strings.Join(parts, "; ")
}

// Is reports whether target is one of the sentinels this error stands for.
func (e *RegistrationError) Is(target error) bool {
	return target == ErrInvalidRegistration || (e.blocked && target == ErrBlockedAddress)
}
