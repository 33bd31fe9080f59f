package ownership

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/widgets"
)

// legacyManager is the merge-patch writer the specs migrate away from.
const legacyManager = "legacy"

// createWidget creates an empty Widget and returns its key.
func createWidget(ctx context.Context, ns, name string) client.ObjectKey {
	GinkgoHelper()
	key, err := widgets.CreateEmpty(ctx, env.Client, ns, name)
	Expect(err).NotTo(HaveOccurred())
	return key
}

// legacyWrite sets conditions (type -> status) and the phase the way the
// controllers being migrated do: GET, change, JSON merge patch of /status.
func legacyWrite(ctx context.Context, key client.ObjectKey, phase string, conds map[string]metav1.ConditionStatus) {
	GinkgoHelper()
	Expect(widgets.LegacyWrite(ctx, env.Client, key, legacyManager, phase, conds)).To(Succeed())
}

// conditions returns the object's conditions as type -> status.
func conditions(ctx context.Context, key client.ObjectKey) map[string]metav1.ConditionStatus {
	GinkgoHelper()
	return widgets.Conditions(getWidget(ctx, key))
}

// getWidget reads the Widget from the API server.
func getWidget(ctx context.Context, key client.ObjectKey) *v1alpha1.Widget {
	GinkgoHelper()
	w, err := widgets.Get(ctx, env.Client, key)
	Expect(err).NotTo(HaveOccurred())
	return w
}

// inspect reads the Widget and decodes its managedFields.
func inspect(ctx context.Context, key client.ObjectKey) *ownership.Ownership {
	GinkgoHelper()
	o, err := ownership.Inspect(getWidget(ctx, key))
	Expect(err).NotTo(HaveOccurred())
	return o
}

// clearManagedFields makes the object look like one that was never tracked
// (created before managedFields existed, or cleared): a single empty entry
// is the API server's spelling of "reset".
func clearManagedFields(ctx context.Context, key client.ObjectKey) {
	GinkgoHelper()
	Expect(widgets.ClearManagedFields(ctx, env.Client, key)).To(Succeed())
	Expect(getWidget(ctx, key).ManagedFields).To(BeEmpty())
}

// metaOf is the object metadata naming key, for objects Migrate reads again.
func metaOf(key client.ObjectKey) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}
}
