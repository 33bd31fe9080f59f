package ssa

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/conflicts"
)

// The yield specs' object: manager m applied Ready and Degraded, and a
// person took Ready's status, reason and message with a merge patch, so m
// still owns Ready's key and lastTransitionTime.
const (
	yieldTransition = "2026-01-02T03:04:05Z"
	// mOwnsReadyKey is m's entry after the merge patch.
	mOwnsReadyKey = `{"f:status":{"f:conditions":{` +
		`"k:{\"type\":\"Ready\"}":{".":{},"f:type":{},"f:lastTransitionTime":{}},` +
		`"k:{\"type\":\"Degraded\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{},"f:message":{},"f:lastTransitionTime":{}}}}}`
	// mOwnsReadyWhole is m's entry before it.
	mOwnsReadyWhole = `{"f:status":{"f:conditions":{` +
		`"k:{\"type\":\"Ready\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{},"f:message":{},"f:lastTransitionTime":{}},` +
		`"k:{\"type\":\"Degraded\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{},"f:message":{},"f:lastTransitionTime":{}}}}}`
	// mOwnsReadyKeyAlone is m's entry after the merge patch when Ready was
	// all it applied.
	mOwnsReadyKeyAlone = `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:type":{},"f:lastTransitionTime":{}}}}}`
	// personOwnsReady is the person's Update entry.
	personOwnsReady = `{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{"f:status":{},"f:reason":{},"f:message":{}}}}}`
	// keptReady is what a yield leaves of m's Ready.
	keptReady = `{"lastTransitionTime":"` + yieldTransition + `","type":"Ready"}`
)

// yieldObserved is the object of the yield specs, observed with the given
// managedFields entries of m and the person ("" leaves an entry out).
func yieldObserved(t *testing.T, h *harness, mEntry, personEntry string) *v1alpha1.Widget {
	t.Helper()
	obs := h.observe(t)
	at := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	obs.Status.Conditions = []metav1.Condition{
		{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Maintenance", Message: "by hand", LastTransitionTime: at},
		{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "Fine", Message: "fine", LastTransitionTime: at},
	}
	if mEntry != "" {
		obs.ManagedFields = append(obs.ManagedFields, entry("m", metav1.ManagedFieldsOperationApply, "status", mEntry))
	}
	if personEntry != "" {
		e := entry("person", metav1.ManagedFieldsOperationUpdate, "status", personEntry)
		e.APIVersion = "demo.statusapply.io/v1alpha1"
		obs.ManagedFields = append(obs.ManagedFields, e)
	}
	return obs
}

// conditionsBuild sets m's conditions: Ready=True and Degraded with the
// given reason, at the fixed transition time.
func conditionsBuild(withDegraded bool, degradedReason string) Build {
	return Build{Func: func(intent *unstructured.Unstructured, _ client.Object) (Built, error) {
		conds := []any{map[string]any{"type": "Ready", "status": "True", "reason": "Up", "message": "up", "lastTransitionTime": yieldTransition}}
		if withDegraded {
			conds = append(conds, map[string]any{"type": "Degraded", "status": "False", "reason": degradedReason, "message": "fine",
				"lastTransitionTime": yieldTransition})
		}
		return Built{}, unstructured.SetNestedSlice(intent.Object, conds, "status", "conditions")
	}}
}

// readyConflict is the API server's 409 for m's Ready: the person owns its
// status, reason and message.
func readyConflict() error {
	var causes []metav1.StatusCause
	for _, f := range []string{"message", "reason", "status"} {
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict,
			Message: `conflict with "person" with subresource "status" using demo.statusapply.io/v1alpha1`,
			Field:   `.status.conditions[type="Ready"].` + f})
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
		Message: `Apply failed with 3 conflicts: conflicts with "person" with subresource "status" using demo.statusapply.io/v1alpha1`,
		Details: &metav1.StatusDetails{Causes: causes},
	}}
}

func yieldedPaths(res Result) []string {
	var out []string
	for _, c := range res.Yielded {
		out = append(out, c.Path.String())
	}
	return out
}

// A predicted yield in a condition the manager still owns leaves out the
// contested fields and keeps the condition's key; when what is left is what
// the manager owns, or nothing, nothing is sent.
func TestApplyYieldKeepsTheKeyOfAnOwnedCondition(t *testing.T) {
	answer := errors.New("answered")
	for _, tc := range []struct {
		name        string
		mEntry      string
		build       Build
		wantSent    bool
		wantInReady string // the Ready item the intent sends
		wantYielded int
	}{
		{"another field changes: the rest is sent with Ready's key", mOwnsReadyKey, conditionsBuild(true, "Rotated"), true, keptReady, 3},
		{"nothing else changes: nothing is sent", mOwnsReadyKey, conditionsBuild(true, "Fine"), false, "", 3},
		{"Ready alone: nothing is sent", mOwnsReadyKeyAlone, conditionsBuild(false, ""), false, "", 3},
		// m never applied Ready: it gives Ready up whole, and what is left
		// claims nothing.
		{"a condition the manager does not own goes whole", "", conditionsBuild(false, ""), false, "", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, WithConflictPolicy("m", conflicts.Yield()))
			h.t.Subresource = StatusSubresource
			obs := yieldObserved(t, h, tc.mEntry, personOwnsReady)
			if tc.mEntry == "" {
				// The person's entry is all there is on Ready: it owns
				// the element too.
				obs.ManagedFields[len(obs.ManagedFields)-1] = func() metav1.ManagedFieldsEntry {
					e := entry("person", metav1.ManagedFieldsOperationUpdate, "status",
						`{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:type":{},"f:status":{},"f:reason":{},"f:message":{},"f:lastTransitionTime":{}}}}}`)
					e.APIVersion = "demo.statusapply.io/v1alpha1"
					return e
				}()
			}
			h.fail = func(int) error { return answer }
			res, err := h.a.Apply(context.Background(), h.t, obs, tc.build, &ApplyOptions{})
			if len(res.Yielded) != tc.wantYielded {
				t.Fatalf("yielded %v, want %d fields of Ready", yieldedPaths(res), tc.wantYielded)
			}
			for _, p := range yieldedPaths(res) {
				if !strings.HasPrefix(p, `.status.conditions[type="Ready"].`) {
					t.Fatalf("yielded %s, not a field of Ready", p)
				}
			}
			if !tc.wantSent {
				if err != nil || res.Sent || len(h.bodies()) != 0 {
					t.Fatalf("err %v, sent %v, %d requests; want nothing sent", err, res.Sent, len(h.bodies()))
				}
				return
			}
			if !errors.Is(err, answer) || len(h.bodies()) != 1 {
				t.Fatalf("err %v, %d requests; want one", err, len(h.bodies()))
			}
			if !strings.Contains(intentOf(res), `"conditions":[`+tc.wantInReady+`,`) {
				t.Fatalf("intent %s does not send Ready as %s", res.Intent, tc.wantInReady)
			}
		})
	}
}

// A yield after the API server's 409 (the observation did not show the
// person's entry) follows the same rule: the retry keeps Ready's key, and
// is not sent when what is left is what the manager owns.
func TestApplyYieldAfterConflictKeepsTheKeyOfAnOwnedCondition(t *testing.T) {
	answer := errors.New("answered")
	for _, tc := range []struct {
		name     string
		mEntry   string
		build    Build
		wantSent bool
	}{
		{"the rest is sent with Ready's key", mOwnsReadyWhole, conditionsBuild(true, "Rotated"), true},
		// The observation shows m's entry after the merge patch, not the
		// person's: nothing is predicted, and what is left after the 409
		// is what m owns.
		{"nothing is left to change: no retry", mOwnsReadyKey, conditionsBuild(true, "Fine"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, WithConflictPolicy("m", conflicts.Yield()))
			h.t.Subresource = StatusSubresource
			obs := yieldObserved(t, h, tc.mEntry, "")
			h.fail = func(n int) error {
				if n == 1 {
					return readyConflict()
				}
				return answer
			}
			res, err := h.a.Apply(context.Background(), h.t, obs, tc.build, &ApplyOptions{})
			bodies := h.bodies()
			if !tc.wantSent {
				if len(res.Yielded) != 3 {
					t.Fatalf("err %v, yielded %v, want Ready's status, reason and message", err, yieldedPaths(res))
				}
				if err != nil || res.Sent || len(bodies) != 1 || h.count(h.a.metrics.applies) != 0 {
					t.Fatalf("err %v, sent %v, %d requests, %v applies counted; want the refused one alone", err, res.Sent, len(bodies),
						h.count(h.a.metrics.applies))
				}
				return
			}
			if !errors.Is(err, answer) || len(bodies) != 2 {
				t.Fatalf("err %v, %d requests; want a retry", err, len(bodies))
			}
			if !strings.Contains(bodies[1], `"conditions":[`+keptReady+`,`) {
				t.Fatalf("retry %s does not send Ready as %s", bodies[1], keptReady)
			}
		})
	}
}
