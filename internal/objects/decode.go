package objects

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kjson "sigs.k8s.io/json"
)

// Decode decodes an API server's response, JSON the client has read, into
// obj as the Kubernetes serializers do (sigs.k8s.io/json: field names match
// case-sensitively, numbers in untyped fields stay integers).
func Decode(data []byte, obj client.Object) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if err := u.UnmarshalJSON(data); err != nil {
			return fmt.Errorf("decoding the API server's response: %w", err)
		}
		return nil
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, obj); err != nil {
		return fmt.Errorf("decoding the API server's response: %w", err)
	}
	return nil
}

// DecodeAs decodes a response into a new object of typ, a pointer to an
// object type (an unstructured object takes its kind from the response).
func DecodeAs(data []byte, typ reflect.Type) (client.Object, error) {
	obj, ok := reflect.New(typ.Elem()).Interface().(client.Object)
	if !ok {
		return nil, fmt.Errorf("decoding the API server's response: %v is not an object type", typ)
	}
	if err := Decode(data, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
