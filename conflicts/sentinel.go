package conflicts

import "errors"

// ErrNotFieldConflict is returned (wrapped) by Parse when the error holds no
// field-manager conflict. Test with errors.Is.
var ErrNotFieldConflict = errors.New("not a field-manager conflict")

// ErrInvalidInput is returned (wrapped) by Predict for arguments it cannot
// work with: a nil observed object, intent or type converter, an observed
// object of another kind than the intent, or a typed observed object that
// does not convert to unstructured content. It is also ssa.ErrInvalidInput,
// the one value that every refusal of bad input wraps, before any request.
var ErrInvalidInput = errors.New("invalid input")

// ErrSchemaMismatch is returned (wrapped) by Predict when the type converter
// cannot type the observed object or the intent: it has no schema for the
// kind, or a value does not fit the schema.
var ErrSchemaMismatch = errors.New("does not fit the type converter's schema")
