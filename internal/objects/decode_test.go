package objects

import (
	"encoding/json"
	"reflect"
	"testing"

	kjson "sigs.k8s.io/json"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// TestResponseFieldNamesAreCaseSensitive pins where Decode and encoding/json
// part: a key spelled in other case than the field's name,
// which encoding/json takes for the field. Decode does what the
// Kubernetes serializers do (sigs.k8s.io/json): it ignores it. An API server
// writes every key as its schema spells it.
func TestResponseFieldNamesAreCaseSensitive(t *testing.T) {
	response := []byte(`{"metadata":{"name":"w","Namespace":"other"},"Status":{"phase":"x"}}`)
	got, k8s, std := &v1alpha1.Widget{}, &v1alpha1.Widget{}, &v1alpha1.Widget{}
	if err := Decode(response, got); err != nil {
		t.Fatal(err)
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(response, k8s); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(response, std); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, k8s) {
		t.Fatalf("Decode decoded\n%+v\nthe Kubernetes serializer\n%+v", got, k8s)
	}
	if got.Namespace != "" || reflect.DeepEqual(got, std) {
		t.Fatalf("Decode took a key of other case for the field: %+v (encoding/json: %+v)", got, std)
	}
}
