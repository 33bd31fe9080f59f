package objects

import (
	"fmt"

	jsoniter "github.com/json-iterator/go"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// responseJSON decodes responses into typed objects, matching field names
// case-sensitively as the Kubernetes serializers do. It skips encoding/json's
// validation pass, which the client already made (see docs/benchmarks.md);
// TestResponseDecodesAsEncodingJSON and FuzzResponseDecodesAsKubernetes hold
// it to the objects encoding/json and the Kubernetes decoder make. Frozen:
// what it keeps is a cache of decoders per Go type.
var responseJSON = jsoniter.Config{CaseSensitive: true}.Froze()

// Decode decodes an API server's response, JSON the client has read, into
// obj.
func Decode(data []byte, obj client.Object) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if err := u.UnmarshalJSON(data); err != nil {
			return fmt.Errorf("decoding the API server's response: %w", err)
		}
		return nil
	}
	if err := responseJSON.Unmarshal(data, obj); err != nil {
		return fmt.Errorf("decoding the API server's response: %w", err)
	}
	return nil
}

// DecodeLike decodes a response into a new object of like's Go type (an
// unstructured like lends its kind).
func DecodeLike(data []byte, like client.Object) (client.Object, error) {
	obj := EmptyLike(like)
	if err := Decode(data, obj); err != nil {
		return nil, err
	}
	return obj, nil
}
