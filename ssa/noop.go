package ssa

import "github.com/statusapply/statusapply/internal/jsonvalue"

// unchangedIntent reports whether applying intent would change nothing the
// manager owns (owned, from extractOwned): identity aside, values compare as
// equalContent has it, and a field left out counts as a change.
func unchangedIntent(intent, owned map[string]any) bool {
	return equalContent(withoutIdentity(intent), withoutIdentity(owned))
}

// withoutIdentity returns content without the fields that name the object
// rather than state anything a manager owns. It copies only what it changes.
func withoutIdentity(content map[string]any) map[string]any {
	out := make(map[string]any, len(content))
	for k, v := range content {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			md, ok := v.(map[string]any)
			if !ok {
				out[k] = v
				continue
			}
			rest := make(map[string]any, len(md))
			for mk, mv := range md {
				switch mk {
				case "name", "namespace", "resourceVersion", "uid", "generateName":
				default:
					rest[mk] = mv
				}
			}
			out[k] = rest
		default:
			out[k] = v
		}
	}
	return out
}

// equalContent compares what two unstructured values state, as server-side
// apply sees it: an empty object is the same as an absent one.
func equalContent(a, b any) bool { return jsonvalue.EqualStated(a, b) }

// pruneEmpty removes, recursively, object-valued fields that hold nothing, so
// that an apply does not claim an empty struct no mutator filled.
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
