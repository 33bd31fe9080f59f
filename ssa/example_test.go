package ssa_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/statusapply/statusapply/ssa"
)

// A condition whose status did not change keeps the lastTransitionTime the
// object shows; observedGeneration is filled from the object's generation.
func ExampleSetCondition() {
	since := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	observed := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Up", LastTransitionTime: since}}

	var conditions []metav1ac.ConditionApplyConfiguration
	err := ssa.SetCondition(&conditions, observed, 7, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "StillUp"})
	fmt.Println(err, *conditions[0].Reason, conditions[0].LastTransitionTime.UTC(), *conditions[0].ObservedGeneration)

	err = ssa.SetCondition(&conditions, observed, 7, metav1.Condition{Type: "Ready", Status: "Maybe", Reason: "Unsure"})
	fmt.Println(err)
	// Output:
	// <nil> StillUp 2026-01-02 03:04:05 +0000 UTC 7
	// invalid input: condition "Ready": status.conditions[Ready].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"
}
