package ssa

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
)

func sampleAC(at time.Time) *acv1alpha1.WidgetApplyConfiguration {
	return acv1alpha1.Widget("w", "ns").WithUID("u1").WithLabels(map[string]string{"app": "x"}).
		WithStatus(acv1alpha1.WidgetStatus().WithPhase("Running").WithConditions(
			metav1ac.Condition().WithType("A").WithStatus("True").WithReason("Up").WithMessage("m").
				WithLastTransitionTime(metav1.NewTime(at)).WithObservedGeneration(2)))
}

func TestDeepCopyACIsIndependent(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	orig := sampleAC(at)
	cp, ok := deepCopyAC(orig).(*acv1alpha1.WidgetApplyConfiguration)
	if !ok || !equalAC(cp, orig) {
		t.Fatalf("the copy differs from the original")
	}
	*cp.Status.Conditions[0].Status = "False"
	cp.Labels["app"] = "y"
	*cp.Status.Phase = "Done"
	*cp.Name = "other" // in the embedded *ObjectMetaApplyConfiguration
	*cp.Kind = "Other" // in the embedded TypeMetaApplyConfiguration value
	if *orig.Status.Conditions[0].Status != "True" || orig.Labels["app"] != "x" || *orig.Status.Phase != "Running" ||
		*orig.Name != "w" || *orig.Kind != "Widget" {
		t.Fatal("changing the copy changed the original")
	}
}

func TestEqualAC(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	base := sampleAC(at)
	tests := []struct {
		name  string
		other *acv1alpha1.WidgetApplyConfiguration
		want  bool
	}{
		{"the same values", sampleAC(at), true},
		{"a time in the same second, in another zone (it encodes the same)", sampleAC(at.Add(300 * time.Millisecond).In(time.FixedZone("x", 3600))), true},
		{"a time a second later", sampleAC(at.Add(time.Second)), false},
		{"a condition's status", func() *acv1alpha1.WidgetApplyConfiguration {
			ac := sampleAC(at)
			*ac.Status.Conditions[0].Status = "False"
			return ac
		}(), false},
		{"a label", sampleAC(at).WithLabels(map[string]string{"app": "y"}), false},
		{"an extra condition", func() *acv1alpha1.WidgetApplyConfiguration {
			ac := sampleAC(at)
			ac.Status.WithConditions(metav1ac.Condition().WithType("B"))
			return ac
		}(), false},
		{"no status", acv1alpha1.Widget("w", "ns").WithUID("u1").WithLabels(map[string]string{"app": "x"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := equalAC(base, tt.other); got != tt.want {
				t.Errorf("equalAC = %v, want %v", got, tt.want)
			}
		})
	}
}
