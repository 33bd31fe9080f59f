package statusfunctests

import (
	v1 "example.com/api/v1"
	"github.com/statusapply/statusapply/batcher"
)

func queue(b *batcher.Batch, w *v1.Widget) error {
	return batcher.EditStatus(b, w, "", func(w *v1.Widget) error { return nil }) // want `empty field manager`
}
