package statusfunctests

import (
	v1 "example.com/api/v1"
	"github.com/statusapply/statusapply/batcher"
)

// With -skiptests, a test's status function is not checked.
func queueInTest(b *batcher.Batch, w *v1.Widget) error {
	return batcher.EditStatus(b, w, "", func(w *v1.Widget) error { return nil })
}
