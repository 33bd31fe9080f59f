package ownership_test

import (
	"errors"
	"fmt"
	"log"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/internal/ownershiptest"
	"github.com/statusapply/statusapply/ownership"
)

func ExampleInspect() {
	// A Widget as the API server returns it after a legacy writer
	// merge-patched conditions Ready and Synced and an apply manager set
	// Reachable.
	o, err := ownership.Inspect(ownershiptest.ObservedWidget())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.ConditionTypes())

	readyStatus := fieldpath.MakePathOrDie("status", "conditions", fieldpath.KeyByFields("type", "Ready"), "status")
	for _, e := range o.Owners(readyStatus) {
		fmt.Println(readyStatus, "is owned by", e)
	}
	for _, e := range o.Legacy() {
		fmt.Println("legacy:", e, "holds", e.StatusFields().Leaves().Size(), "status leaves")
	}

	// A stripped object is an error, never "owns nothing".
	stripped := ownershiptest.ObservedWidget()
	stripped.ManagedFields = nil
	_, err = ownership.Inspect(stripped)
	fmt.Println(errors.Is(err, ownership.ErrNoManagedFields))
	// Output:
	// map[legacy:[Ready Synced] networking:[Reachable]]
	// .status.conditions[type="Ready"].status is owned by legacy (Update, status)
	// legacy: legacy (Update, status) holds 11 status leaves
	// true
}
