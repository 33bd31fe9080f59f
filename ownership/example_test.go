package ownership_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
)

// observed is a Widget as the API server returns it after a legacy writer
// merge-patched conditions Ready and Synced and an apply manager set Reachable.
const observed = `{
  "apiVersion": "demo.statusapply.io/v1alpha1", "kind": "Widget",
  "metadata": {"name": "w1", "namespace": "default", "managedFields": [
    {"manager": "legacy", "operation": "Update", "subresource": "status",
     "apiVersion": "demo.statusapply.io/v1alpha1", "time": "2026-01-02T03:04:05Z", "fieldsType": "FieldsV1",
     "fieldsV1": {"f:status": {".": {}, "f:phase": {}, "f:conditions": {".": {},
       "k:{\"type\":\"Ready\"}": {".": {}, "f:type": {}, "f:status": {}, "f:reason": {}, "f:message": {}, "f:lastTransitionTime": {}},
       "k:{\"type\":\"Synced\"}": {".": {}, "f:type": {}, "f:status": {}, "f:reason": {}, "f:message": {}, "f:lastTransitionTime": {}}}}}},
    {"manager": "networking", "operation": "Apply", "subresource": "status",
     "apiVersion": "demo.statusapply.io/v1alpha1", "time": "2026-01-02T03:04:06Z", "fieldsType": "FieldsV1",
     "fieldsV1": {"f:status": {"f:conditions": {
       "k:{\"type\":\"Reachable\"}": {".": {}, "f:type": {}, "f:status": {}, "f:reason": {}, "f:message": {}, "f:lastTransitionTime": {}}}}}}
  ]}}`

// decodeWidget decodes the observed Widget.
func decodeWidget() *v1alpha1.Widget {
	w := &v1alpha1.Widget{}
	if err := json.Unmarshal([]byte(observed), w); err != nil {
		log.Fatal(err)
	}
	return w
}

func ExampleInspect() {
	o, err := ownership.Inspect(decodeWidget())
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
	stripped := decodeWidget()
	stripped.ManagedFields = nil
	_, err = ownership.Inspect(stripped)
	fmt.Println(errors.Is(err, ownership.ErrNoManagedFields))
	// Output:
	// map[legacy:[Ready Synced] networking:[Reachable]]
	// .status.conditions[type="Ready"].status is owned by legacy (Update, status)
	// legacy: legacy (Update, status) holds 11 status leaves
	// true
}
