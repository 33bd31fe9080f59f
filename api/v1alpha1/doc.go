// Package v1alpha1 is the example API group that statusapply's tests, demo and
// documentation share.
//
// Widget is shaped like the objects statusapply exists for: several controllers
// write parts of its status. Its conditions are a map list keyed by type, so each
// field manager owns its own condition types; Plan is decided once from observed
// state (the plan-creation race); ReadyReplicas, Endpoint and Attributes are scalar
// and map fields meant for different writers.
//
// Gadget has the same conditions without list markers. Its conditions list is
// atomic, as it still is in many CRDs: a second field manager that applies a
// condition conflicts on the whole list. Tests, the lint and the docs use it to
// show that failure mode.
//
// +kubebuilder:object:generate=true
// +kubebuilder:ac:generate=true
// +groupName=demo.statusapply.io
package v1alpha1
