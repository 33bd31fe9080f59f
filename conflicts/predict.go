package conflicts

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/statusapply/statusapply/internal/inspect"
	"github.com/statusapply/statusapply/internal/objects"
	"github.com/statusapply/statusapply/ownership"
)

// PredictOption tunes Predict.
type PredictOption func(*predictOptions)

type predictOptions struct {
	assumeUntracked bool
}

// AssumeUntracked tells Predict that the observed object was read from the API
// server with its managedFields, so an empty list means the server does not
// track the object yet. Predict then does what the server's first apply does:
// it attributes every existing field to the Update owner ownership.BeforeFirstApplyManager.
// Never pass it for objects from a cache that may strip managedFields.
func AssumeUntracked() PredictOption {
	return func(o *predictOptions) { o.assumeUntracked = true }
}

// Predict computes, without a request, the conflicts a non-forced apply of
// intent by manager through subresource ("status" or "" for the main
// resource) would meet on the observed object, from the object's
// managedFields. It runs the structured-merge-diff merge the API server runs,
// so the rules are the server's: another manager's field conflicts only when
// the apply changes its value (the same value is shared ownership), Apply and
// Update owners alike, and the manager's own Apply entry never conflicts.
//
// tc must know the object's type with its list and map markers (for the
// example API, applyconfiguration.NewTypeConverter(scheme)); with a deduced
// converter every list is atomic. observed may be typed or unstructured; its
// apiVersion and kind are taken from intent when unset. intent is not
// modified.
//
// Like the server, a "status" apply ignores metadata and spec, and a main
// resource apply ignores status (correct for resources with a status
// subresource). Every owner's fields are read in the observed version's
// schema, which is exact for single-version APIs.
//
// The conflicts come back sorted by owner and path. An object without
// managedFields yields ownership.ErrNoManagedFields unless AssumeUntracked is
// given: objects read from a cache that strips managedFields look exactly like
// objects the server does not track yet, so Predict refuses to guess.
// Errors name the object. Arguments Predict cannot work with yield
// ErrInvalidInput, an object or intent the type converter cannot type
// ErrSchemaMismatch, and an unreadable managedFields entry
// ownership.ErrBadManagedFields.
func Predict(observed runtime.Object, tc managedfields.TypeConverter, manager, subresource string, intent *unstructured.Unstructured, opts ...PredictOption) ([]Conflict, error) {
	var o predictOptions
	for _, opt := range opts {
		opt(&o)
	}
	if observed == nil || intent == nil || tc == nil {
		return nil, fmt.Errorf("predicting conflicts: %w: observed, intent and type converter must not be nil", ErrInvalidInput)
	}
	ref := ownership.ObjectRef{GVK: intent.GroupVersionKind(), Namespace: intent.GetNamespace(), Name: intent.GetName()}
	out, err := predict(observed, tc, manager, subresource, intent, ref, o)
	if err != nil {
		return nil, fmt.Errorf("predicting conflicts of manager %s on %s: %w", manager, ref, err)
	}
	return out, nil
}

// predict is Predict's work, in its three phases: type both objects, rebuild
// the owners the server would see, and run the server's merge for manager.
func predict(observed runtime.Object, tc managedfields.TypeConverter, manager, subresource string, intent *unstructured.Unstructured,
	ref ownership.ObjectRef, o predictOptions) ([]Conflict, error) {
	acc, err := meta.Accessor(observed)
	if err != nil {
		return nil, err
	}
	entries := acc.GetManagedFields()
	if len(entries) == 0 && !o.assumeUntracked {
		return nil, ownership.ErrNoManagedFields
	}
	live, config, err := typeBoth(observed, tc, intent)
	if err != nil {
		return nil, err
	}
	version := fieldpath.APIVersion(intent.GetAPIVersion())
	managers, filters, err := owners(ref, entries, live, version, subresource)
	if err != nil {
		return nil, err
	}
	return mergeConflicts(live, config, version, managers, filters, manager, subresource)
}

// typeBoth types the observed object and the intent, without managedFields,
// with tc.
func typeBoth(observed runtime.Object, tc managedfields.TypeConverter, intent *unstructured.Unstructured) (live, config *typed.TypedValue, err error) {
	if live, err = liveTyped(observed, tc, intent); err != nil {
		return nil, nil, err
	}
	cfg := intent.DeepCopy()
	unstructured.RemoveNestedField(cfg.Object, "metadata", "managedFields")
	if config, err = tc.ObjectToTyped(cfg); err != nil {
		return nil, nil, fmt.Errorf("typing the apply intent: %w: %w", ErrSchemaMismatch, err)
	}
	return live, config, nil
}

// owners rebuilds the managed fields the API server would merge against:
// every entry of the object, or, for an object without entries, everything
// it holds attributed to before-first-apply as the server would on the first
// apply. The filters ignore, in every version, what the subresource does not
// write.
func owners(ref ownership.ObjectRef, entries []metav1.ManagedFieldsEntry, live *typed.TypedValue, version fieldpath.APIVersion,
	subresource string) (fieldpath.ManagedFields, map[fieldpath.APIVersion]fieldpath.Filter, error) {
	ignored := ignoredFields(subresource)
	managers := fieldpath.ManagedFields{}
	filters := map[fieldpath.APIVersion]fieldpath.Filter{version: fieldpath.NewExcludeSetFilter(ignored)}
	if len(entries) == 0 {
		set, err := live.ToFieldSet()
		if err != nil {
			return nil, nil, err
		}
		id, err := managerID(metav1.ManagedFieldsEntry{Manager: ownership.BeforeFirstApplyManager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: string(version), Subresource: subresource})
		if err != nil {
			return nil, nil, err
		}
		managers[id] = fieldpath.NewVersionedSet(set.RecursiveDifference(ignored), version, false)
		return managers, filters, nil
	}
	inspected, err := inspect.Entries(ref, entries)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range inspected.Entries {
		id, err := entryID(e)
		if err != nil {
			return nil, nil, err
		}
		v := fieldpath.APIVersion(e.APIVersion)
		managers[id] = fieldpath.NewVersionedSet(e.Fields, v, e.Operation == metav1.ManagedFieldsOperationApply)
		filters[v] = filters[version]
	}
	return managers, filters, nil
}

// mergeConflicts runs structured-merge-diff's apply of config by manager,
// without force, and returns the conflicts it reports, sorted.
func mergeConflicts(live, config *typed.TypedValue, version fieldpath.APIVersion, managers fieldpath.ManagedFields,
	filters map[fieldpath.APIVersion]fieldpath.Filter, manager, subresource string) ([]Conflict, error) {
	self, err := managerID(metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, Subresource: subresource})
	if err != nil {
		return nil, err
	}
	updater := (&merge.UpdaterBuilder{Converter: sameVersion{}, IgnoreFilter: filters}).BuildUpdater()
	_, _, err = updater.Apply(live, config, version, managers, self, false)
	var found merge.Conflicts
	switch {
	case err == nil:
		return nil, nil
	case !errors.As(err, &found):
		return nil, err
	}
	out := make([]Conflict, 0, len(found))
	for _, c := range found {
		out = append(out, newConflict(ownerFromID(c.Manager), c.Path))
	}
	slices.SortFunc(out, func(a, b Conflict) int {
		return cmp.Or(
			cmp.Compare(a.Manager, b.Manager),
			cmp.Compare(a.Operation, b.Operation),
			cmp.Compare(a.Subresource, b.Subresource),
			cmp.Compare(a.APIVersion, b.APIVersion),
			a.Path.Compare(b.Path),
		)
	})
	return out, nil
}

// liveTyped types the observed object without its managedFields, taking the
// apiVersion and kind from intent when the object lacks them (typed objects
// read through a client usually do).
func liveTyped(observed runtime.Object, tc managedfields.TypeConverter, intent *unstructured.Unstructured) (*typed.TypedValue, error) {
	u, ok := observed.(*unstructured.Unstructured)
	if ok {
		u = objects.WithoutManagedFields(u)
	} else {
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(observed)
		if err != nil {
			return nil, fmt.Errorf("%w: converting the observed object: %w", ErrInvalidInput, err)
		}
		u = objects.WithoutManagedFields(&unstructured.Unstructured{Object: content})
	}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		u = &unstructured.Unstructured{Object: maps.Clone(u.Object)} // SetGroupVersionKind writes to the map
		u.SetGroupVersionKind(intent.GroupVersionKind())
	}
	if u.GroupVersionKind() != intent.GroupVersionKind() {
		return nil, fmt.Errorf("%w: observed object is %s, the intent %s", ErrInvalidInput, u.GroupVersionKind(), intent.GroupVersionKind())
	}
	live, err := tc.ObjectToTyped(u, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("typing the observed object: %w: %w", ErrSchemaMismatch, err)
	}
	return live, nil
}

// entryID returns the manager key of a decoded managedFields entry.
func entryID(e ownership.Entry) (string, error) {
	switch e.Operation {
	case metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate:
	default:
		return "", fmt.Errorf("%w: managedFields entry of %q has operation %q, want Apply or Update", ownership.ErrBadManagedFields, e.Manager, e.Operation)
	}
	return managerID(metav1.ManagedFieldsEntry{Manager: e.Manager, Operation: e.Operation, APIVersion: e.APIVersion, Subresource: e.Subresource})
}

// ignoredFields are the fields the API server resets, and so ignores in
// conflict detection, for an apply through subresource.
func ignoredFields(subresource string) *fieldpath.Set {
	if subresource == "status" {
		return fieldpath.NewSet(fieldpath.MakePathOrDie("metadata"), fieldpath.MakePathOrDie("spec"))
	}
	return fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
}

// sameVersion reads every owner's fields in the observed object's version; see
// Predict.
type sameVersion struct{}

// Convert implements merge.Converter.
func (sameVersion) Convert(object *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return object, nil
}

// IsMissingVersionError implements merge.Converter.
func (sameVersion) IsMissingVersionError(error) bool { return false }
