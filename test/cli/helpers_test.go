package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/cli"
	"github.com/statusapply/statusapply/ownership"
)

// legacyManager is the merge-patch writer the specs start from.
const legacyManager = "legacy"

// result is what one command run printed and returned.
type result struct {
	stdout, stderr string
	err            error
}

// run executes the statusapply command tree in-process with args, connected
// to the suite's API server through the kubeconfig file.
func run(ctx context.Context, args ...string) result {
	GinkgoHelper()
	root := cli.NewRootCommand()
	var stdout, stderr bytes.Buffer
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetIn(strings.NewReader(""))
	root.SetArgs(append(slices.Clone(args), "--kubeconfig", kubeconfig, "--cache-dir", cacheDir))
	err := root.ExecuteContext(ctx)
	GinkgoWriter.Printf("$ statusapply %s\n%s%s", strings.Join(args, " "), stdout.String(), stderr.String())
	if err != nil {
		GinkgoWriter.Printf("error: %v\n", err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// decode parses a command's JSON output into v.
func decode(r result, v any) {
	GinkgoHelper()
	Expect(json.Unmarshal([]byte(r.stdout), v)).To(Succeed(), "stdout is one JSON document:\n%s", r.stdout)
}

// crdFile is the path of an example CRD manifest, found from this file so
// that the specs do not depend on the working directory.
func crdFile(name string) string {
	GinkgoHelper()
	_, self, _, ok := runtime.Caller(0)
	Expect(ok).To(BeTrue())
	return filepath.Join(filepath.Dir(self), "..", "..", "config", "crd", name)
}

// createWidget creates an empty Widget and returns its key.
func createWidget(ctx context.Context, ns, name string) client.ObjectKey {
	GinkgoHelper()
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	Expect(env.Client.Create(ctx, w)).To(Succeed())
	return client.ObjectKeyFromObject(w)
}

// legacyWrite sets conditions and the phase the way the controllers being
// migrated do: GET, change, JSON merge patch of /status.
func legacyWrite(ctx context.Context, key client.ObjectKey, phase string, conds map[string]metav1.ConditionStatus) {
	GinkgoHelper()
	w := getWidget(ctx, key)
	base := w.DeepCopy()
	for _, t := range slices.Sorted(maps.Keys(conds)) {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
			Type: t, Status: conds[t], Reason: "Legacy", Message: "set by the legacy writer",
		})
	}
	w.Status.Phase = phase
	Expect(env.Client.Status().Patch(ctx, w, client.MergeFrom(base), client.FieldOwner(legacyManager))).To(Succeed())
}

// applyConditions applies exactly the given conditions as manager, never
// forcing: a type left out is given up.
func applyConditions(ctx context.Context, key client.ObjectKey, manager string, conds map[string]metav1.ConditionStatus) error {
	status := acv1alpha1.WidgetStatus()
	for _, t := range slices.Sorted(maps.Keys(conds)) {
		status.WithConditions(metav1ac.Condition().WithType(t).WithStatus(conds[t]).
			WithReason("Applied").WithMessage("set by " + manager).WithLastTransitionTime(metav1.Now()))
	}
	return env.Client.Status().Apply(ctx, acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(status), client.FieldOwner(manager))
}

// applyExisting applies the object's condition of the given type verbatim as
// manager, which shares ownership with the current owners.
func applyExisting(ctx context.Context, key client.ObjectKey, manager, condType string) error {
	GinkgoHelper()
	c := meta.FindStatusCondition(getWidget(ctx, key).Status.Conditions, condType)
	Expect(c).NotTo(BeNil())
	status := acv1alpha1.WidgetStatus().WithConditions(metav1ac.Condition().WithType(c.Type).WithStatus(c.Status).
		WithReason(c.Reason).WithMessage(c.Message).WithLastTransitionTime(c.LastTransitionTime))
	return env.Client.Status().Apply(ctx, acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(status), client.FieldOwner(manager))
}

// clearManagedFields makes the object look never tracked: a single empty
// entry is the API server's spelling of "reset".
func clearManagedFields(ctx context.Context, key client.ObjectKey) {
	GinkgoHelper()
	Expect(env.Client.Patch(ctx, getWidget(ctx, key), client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]`)))).To(Succeed())
	Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty())
}

// getWidget reads the Widget from the API server.
func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	GinkgoHelper()
	w := &v1alpha1.Widget{}
	Expect(env.Client.Get(ctx, key, w)).To(Succeed())
	return w
}

// inspect reads the Widget and decodes its managedFields.
func inspect(ctx context.Context, key client.ObjectKey) *ownership.Ownership {
	GinkgoHelper()
	o, err := ownership.Inspect(getWidget(ctx, key))
	Expect(err).NotTo(HaveOccurred())
	return o
}

// conditions returns the object's conditions as type -> status.
func conditions(ctx context.Context, key client.ObjectKey) map[string]metav1.ConditionStatus {
	GinkgoHelper()
	out := map[string]metav1.ConditionStatus{}
	for _, c := range getWidget(ctx, key).Status.Conditions {
		out[c.Type] = c.Status
	}
	return out
}

// cs builds a type -> status map from pairs, for readable specs.
func cs(pairs ...string) map[string]metav1.ConditionStatus {
	out := map[string]metav1.ConditionStatus{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = metav1.ConditionStatus(pairs[i+1])
	}
	return out
}

// lineWith returns the first line of out containing every part, or "".
func lineWith(out string, parts ...string) string {
	for line := range strings.Lines(out) {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}

// conditionsByManager collects manager -> condition types from a JSON
// ownership view, the shape ownership.Ownership.ConditionTypes returns.
func conditionsByManager(managers []managerJSON) map[string][]string {
	out := map[string][]string{}
	for _, m := range managers {
		if len(m.Conditions) > 0 {
			out[m.Manager] = append(out[m.Manager], m.Conditions...)
		}
	}
	return out
}

// applyPhase applies the phase as manager, never forcing.
func applyPhase(ctx context.Context, key client.ObjectKey, manager, phase string) error {
	return env.Client.Status().Apply(ctx,
		acv1alpha1.Widget(key.Name, key.Namespace).WithStatus(acv1alpha1.WidgetStatus().WithPhase(phase)),
		client.FieldOwner(manager))
}
