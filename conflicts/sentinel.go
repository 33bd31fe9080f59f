package conflicts

import "errors"

// ErrNotFieldConflict is returned (wrapped) by Parse when the error holds no
// field-manager conflict. Test with errors.Is.
var ErrNotFieldConflict = errors.New("not a field-manager conflict")
