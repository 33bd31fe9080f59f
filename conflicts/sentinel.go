package conflicts

// sentinelError is a constant error value, so that the package's sentinels are
// constants rather than mutable package variables.
type sentinelError string

// Error implements error.
func (e sentinelError) Error() string { return string(e) }

const (
	// ErrNotFieldConflict is returned (wrapped) by Parse when the error holds no
	// field-manager conflict. Test with errors.Is.
	ErrNotFieldConflict = sentinelError("not a field-manager conflict")

	// ErrNoManagedFields is returned (wrapped, with the object's identity) by
	// Predict when the observed object carries no managedFields. Objects read
	// from a cache that strips managedFields look exactly like objects the server
	// does not track yet, so Predict refuses to guess; pass AssumeUntracked when
	// the object was read from the API server.
	ErrNoManagedFields = sentinelError("observed object has no managedFields")
)
