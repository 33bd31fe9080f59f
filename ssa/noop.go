package ssa

import (
	"encoding/json"
	"reflect"
)

// Unchanged reports whether applying intent would change nothing, given what
// the manager owns on the observed object (from Owned). Identity (apiVersion,
// kind, metadata.name, namespace, resourceVersion, uid) is ignored; everything
// else, including a field left out, counts. Values are compared as JSON, so an
// int64 and the same number decoded as float64 are equal.
func Unchanged(intent, owned map[string]any) bool {
	a, errA := normalize(intent)
	b, errB := normalize(owned)
	return errA == nil && errB == nil && reflect.DeepEqual(a, b)
}

func normalize(content map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	delete(out, "apiVersion")
	delete(out, "kind")
	if md, ok := out["metadata"].(map[string]any); ok {
		for _, f := range []string{"name", "namespace", "resourceVersion", "uid", "generateName"} {
			delete(md, f)
		}
	}
	pruneEmpty(out)
	return out, nil
}

// pruneEmpty removes, recursively, object-valued fields that hold nothing. An
// apply configuration whose mutators allocated a struct (status: {}) but set no
// field in it states nothing, and applying it would only claim the empty struct.
func pruneEmpty(m map[string]any) {
	for k, v := range m {
		switch child := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			pruneEmpty(child)
			if len(child) == 0 {
				delete(m, k)
			}
		}
	}
}
