package schemas

import (
	"context"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/batcher"
	"github.com/statusapply/statusapply/conditions"
	"github.com/statusapply/statusapply/schemas"
	"github.com/statusapply/statusapply/schemas/crdschema"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/suite"
)

var sprocketGVK = schema.GroupVersionKind{Group: "test.statusapply.io", Version: "v1", Kind: "Sprocket"}

var _ = Describe("Status of a CRD known only from its YAML", func() {
	for _, src := range sources {
		Context("with schemas "+src.name, func() {
			It("merges two writers' conditions per type, loses none, and sends nothing when nothing changed", func(ctx context.Context) {
				ns := suite.Namespace(ctx, env)
				key := create(ctx, sprocketGVK, ns, "s1")
				spin, mesh := newWriter(src.make(sprocketCRD())), newWriter(src.make(sprocketCRD()))

				// One writer contributes through a Mutator of the unstructured
				// apply configuration, the other through an Edit of the object.
				spinTrue := func(b *batcher.Batch, obj *unstructured.Unstructured) error {
					return batcher.Status(b, obj, spinner, spinning(metav1.ConditionTrue))
				}
				meshTrue := func(b *batcher.Batch, obj *unstructured.Unstructured) error {
					return batcher.EditStatus(b, obj, mesher, conditions.EditUnstructured(meshed(metav1.ConditionTrue)))
				}
				Expect(spin.reconcile(ctx, sprocketGVK, key, spinTrue)).To(Succeed())
				Expect(mesh.reconcile(ctx, sprocketGVK, key, meshTrue)).To(Succeed())
				Expect(spin.requests.Count("apply")).To(Equal(1), "spinner: %s", spin.requests)
				Expect(mesh.requests.Count("apply")).To(Equal(1), "mesher: %s", mesh.requests)

				obj := get(ctx, sprocketGVK, key)
				Expect(conditionTypes(obj)).To(Equal(map[string]string{"Spinning": "True", "Meshed": "True"}))
				Expect(owns(obj, spinner, "Spinning")).To(BeTrue())
				Expect(owns(obj, spinner, "Meshed")).To(BeFalse())
				Expect(owns(obj, mesher, "Meshed")).To(BeTrue())
				Expect(owns(obj, mesher, "Spinning")).To(BeFalse())

				// The same reconciles again: nothing changed, nothing is sent.
				spin.requests.Reset()
				mesh.requests.Reset()
				Expect(spin.reconcile(ctx, sprocketGVK, key, spinTrue)).To(Succeed())
				Expect(mesh.reconcile(ctx, sprocketGVK, key, meshTrue)).To(Succeed())
				Expect(spin.requests.Total()).To(BeZero(), "spinner: %s", spin.requests)
				Expect(mesh.requests.Total()).To(BeZero(), "mesher: %s", mesh.requests)
				Expect(get(ctx, sprocketGVK, key).GetResourceVersion()).To(Equal(obj.GetResourceVersion()))

				// Each flips its own condition; the other's stays.
				Expect(spin.reconcile(ctx, sprocketGVK, key, func(b *batcher.Batch, obj *unstructured.Unstructured) error {
					return batcher.Status(b, obj, spinner, spinning(metav1.ConditionFalse))
				})).To(Succeed())
				Expect(conditionTypes(get(ctx, sprocketGVK, key))).To(Equal(map[string]string{"Spinning": "False", "Meshed": "True"}))
				Expect(mesh.reconcile(ctx, sprocketGVK, key, func(b *batcher.Batch, obj *unstructured.Unstructured) error {
					return batcher.EditStatus(b, obj, mesher, conditions.EditUnstructured(meshed(metav1.ConditionFalse)))
				})).To(Succeed())
				obj = get(ctx, sprocketGVK, key)
				Expect(conditionTypes(obj)).To(Equal(map[string]string{"Spinning": "False", "Meshed": "False"}))
				Expect(owns(obj, spinner, "Spinning") && owns(obj, mesher, "Meshed")).To(BeTrue())
			})

			It("writes a map list the CRD gains while it runs, per key, with the same Appliers", func(ctx context.Context) {
				ns := suite.Namespace(ctx, env)
				group := map[string]string{"from the cluster": clusterGroup.Group, "from the CRD's YAML": yamlGroup.Group}[src.name]
				crd := installCopy(group)
				gvk := schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Sprocket"}
				key := create(ctx, gvk, ns, "s1")
				tc := src.evolving(crd)
				spin, mesh := newWriter(tc), newWriter(tc)
				spinTrue := func(b *batcher.Batch, obj *unstructured.Unstructured) error {
					return batcher.Status(b, obj, spinner, spinning(metav1.ConditionTrue))
				}
				Expect(spin.reconcile(ctx, gvk, key, spinTrue)).To(Succeed())
				versioned := tc.(interface{ SchemaVersion() uint64 })
				before := versioned.SchemaVersion()

				By("adding status.gears, a map list keyed by name, to the CRD on the API server")
				Eventually(func() error {
					current := &apiextensionsv1.CustomResourceDefinition{}
					if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), current); err != nil {
						return err
					}
					addGears(current)
					if err := env.Client.Update(ctx, current); err != nil {
						return err
					}
					crd = current
					return nil
				}).Should(Succeed())
				if offline, ok := tc.(*crdschema.CRDs); ok {
					// What a watch on CRDs would do for an offline converter.
					Expect(offline.Set(crd)).To(Succeed())
				}
				// The Appliers' conversions pick the new schema up: at once
				// offline, within the refresh interval from the cluster.
				Eventually(func() uint64 {
					_, _ = tc.ObjectToTyped(get(ctx, gvk, key))
					return versioned.SchemaVersion()
				}).Should(BeNumerically(">", before), "the converter's schema was never replaced")

				// One writer adds its gear in its apply configuration, the
				// other by an Edit of the object, as they would after an
				// upgrade. With the old schema, the Edit would claim the
				// whole list, the spinner's gear included.
				spinGear := func(b *batcher.Batch, obj *unstructured.Unstructured) error {
					return errors.Join(spinTrue(b, obj), batcher.Status(b, obj, spinner, func(ac, _ *unstructured.Unstructured) error {
						return putGear(ac, "a", 8)
					}))
				}
				meshGear := func(b *batcher.Batch, obj *unstructured.Unstructured) error {
					return batcher.EditStatus(b, obj, mesher, func(u *unstructured.Unstructured) error { return putGear(u, "b", 12) })
				}
				// The API server takes a moment to serve the new schema: until
				// it does it prunes the field, and the writers write again, as
				// controllers would on their next reconcile.
				Eventually(func(g Gomega) {
					g.Expect(spin.reconcile(ctx, gvk, key, spinGear)).To(Succeed())
					g.Expect(mesh.reconcile(ctx, gvk, key, meshGear)).To(Succeed())
					g.Expect(gearNames(get(ctx, gvk, key))).To(Equal([]string{"a", "b"}))
				}).Should(Succeed())

				obj := get(ctx, gvk, key)
				Expect(conditionTypes(obj)).To(Equal(map[string]string{"Spinning": "True"}))
				Expect(ownsGear(obj, spinner, "a")).To(BeTrue())
				Expect(ownsGear(obj, spinner, "b")).To(BeFalse())
				Expect(ownsGear(obj, mesher, "b")).To(BeTrue())
				Expect(ownsGear(obj, mesher, "a")).To(BeFalse(), "the mesher claimed the spinner's gear: %v", obj.GetManagedFields())

				// Converged: the same reconciles send nothing.
				spin.requests.Reset()
				mesh.requests.Reset()
				Expect(spin.reconcile(ctx, gvk, key, spinGear)).To(Succeed())
				Expect(mesh.reconcile(ctx, gvk, key, meshGear)).To(Succeed())
				Expect(spin.requests.Total()).To(BeZero(), "spinner: %s", spin.requests)
				Expect(mesh.requests.Total()).To(BeZero(), "mesher: %s", mesh.requests)
			})
		})
	}

	// A field the CRD gained reaches a writer as soon as the first object
	// holding it does, long before its converter's refresh interval (10 s by
	// default): a writer's Edit that adds its gear a few milliseconds after
	// another writer's Mutator added one must type the object it edited, so
	// that the converter checks the cluster's schema at once, rather than
	// diff it with the schema it read before and claim the whole list as one
	// atomic value. The control is a converter that never learns the new
	// schema (the CRD's old YAML): its Edit is refused before any request,
	// rather than claiming the other writer's gear.
	It("types an Edit with the schema of a field the CRD gained, before the refresh interval", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		crd := installCopy(promptGroup.Group)
		old := crd.DeepCopy()
		gvk := promptGroup.WithKind("Sprocket")
		key := create(ctx, gvk, ns, "s1")
		tc, err := schemas.FromCluster(env.Config) // the default refresh interval
		Expect(err).NotTo(HaveOccurred())
		spin, mesh := newWriter(tc), newWriter(tc)
		spinTrue := func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.Status(b, obj, spinner, spinning(metav1.ConditionTrue))
		}
		Expect(spin.reconcile(ctx, gvk, key, spinTrue)).To(Succeed())
		Expect(mesh.reconcile(ctx, gvk, key, spinTrue)).To(Succeed(), "both converters read the schema without gears")

		Eventually(func() error {
			current := &apiextensionsv1.CustomResourceDefinition{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), current); err != nil {
				return err
			}
			addGears(current)
			return env.Client.Update(ctx, current)
		}).Should(Succeed())
		spinGear := func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.Status(b, obj, spinner, func(ac, _ *unstructured.Unstructured) error { return putGear(ac, "a", 8) })
		}
		meshGear := func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.EditStatus(b, obj, mesher, func(u *unstructured.Unstructured) error { return putGear(u, "b", 12) })
		}
		By("the spinner's gear lands once the API server serves the new schema; the mesher edits right after")
		Eventually(func(g Gomega) {
			g.Expect(spin.reconcile(ctx, gvk, key, spinGear)).To(Succeed())
			g.Expect(gearNames(get(ctx, gvk, key))).To(Equal([]string{"a"}))
		}).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(mesh.reconcile(ctx, gvk, key, meshGear)).To(Succeed())
			g.Expect(gearNames(get(ctx, gvk, key))).To(Equal([]string{"a", "b"}))
		}).Should(Succeed())
		obj := get(ctx, gvk, key)
		Expect(ownsGear(obj, mesher, "b")).To(BeTrue())
		Expect(ownsGear(obj, mesher, "a")).To(BeFalse(), "the mesher claimed the spinner's gear: %v", obj.GetManagedFields())

		By("the spinner states its condition alone, declaratively: its gear goes")
		Expect(spin.reconcile(ctx, gvk, key, func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.Status(b, obj, spinner, spinning(metav1.ConditionTrue), ssa.Declarative)
		})).To(Succeed())
		Expect(gearNames(get(ctx, gvk, key))).To(Equal([]string{"b"}))

		By("control: an Edit through a converter that keeps the old schema is refused before any request")
		stale := newWriter(fromYAML(old))
		err = stale.reconcile(ctx, gvk, key, func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.EditStatus(b, obj, "sprocket-stale", func(u *unstructured.Unstructured) error { return putGear(u, "c", 1) })
		})
		Expect(err).To(MatchError(ssa.ErrInvalidInput))
		Expect(stale.requests.Count("apply")).To(BeZero(), "%s", stale.requests)
	})

	It("says which kind has no schema and how to provide one", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		offline, err := crdschema.FromCRDFiles(sprocketManifest)
		Expect(err).NotTo(HaveOccurred())
		w := newWriter(offline)

		// A Widget the API server serves, through an Applier whose only
		// custom schemas are the Sprocket's.
		widget := &unstructured.Unstructured{}
		widget.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
		widget.SetNamespace(ns)
		widget.SetName("w1")
		Expect(env.Client.Create(ctx, widget)).To(Succeed())
		err = w.reconcile(ctx, widget.GroupVersionKind(), client.ObjectKeyFromObject(widget), func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.EditStatus(b, obj, "widget-writer", conditions.EditUnstructured(meshed(metav1.ConditionTrue)))
		})
		GinkgoWriter.Printf("the miss: %v\n", err)
		Expect(err).To(MatchError(ssa.ErrNoSchema))
		var miss *schemas.MissError
		Expect(errors.As(err, &miss)).To(BeTrue())
		Expect(miss.GVK.Kind).To(Equal("Widget"))
		for _, want := range []string{
			"no schema for kind Widget (demo.statusapply.io/v1alpha1)",
			"sprockets.test.statusapply.io",
			"WithTypeConverter",
			"schemas.FromCluster",
			"crdschema.FromCRDFiles",
		} {
			Expect(err.Error()).To(ContainSubstring(want))
		}
		Expect(w.requests.Count("apply")).To(BeZero(), "%s", w.requests)
	})

	// A Mutator of a manager that owns nothing yet needs no extraction, and
	// a status.phase needs no condition check: it is refused all the same,
	// as an Edit is, since no path may send without the kind's schema. The
	// control applies the same Mutator through an Applier that has it.
	It("refuses a Mutator on a kind without a schema as it refuses an Edit", func(ctx context.Context) {
		ns := suite.Namespace(ctx, env)
		offline, err := crdschema.FromCRDFiles(sprocketManifest)
		Expect(err).NotTo(HaveOccurred())
		widget := &unstructured.Unstructured{}
		widget.SetGroupVersionKind(v1alpha1.SchemeGroupVersion.WithKind("Widget"))
		widget.SetNamespace(ns)
		widget.SetName("w-phase")
		Expect(env.Client.Create(ctx, widget)).To(Succeed())
		setPhase := func(b *batcher.Batch, obj *unstructured.Unstructured) error {
			return batcher.Status(b, obj, "phase-writer", func(ac, _ *unstructured.Unstructured) error {
				return unstructured.SetNestedField(ac.Object, "Running", "status", "phase")
			})
		}
		w := newWriter(offline)
		err = w.reconcile(ctx, widget.GroupVersionKind(), client.ObjectKeyFromObject(widget), setPhase)
		Expect(err).To(MatchError(ssa.ErrNoSchema))
		Expect(w.requests.Count("apply")).To(BeZero(), "%s", w.requests)

		By("the control: with the Widget's schema the same Mutator is sent")
		cluster, err := schemas.FromCluster(env.Config)
		Expect(err).NotTo(HaveOccurred())
		withSchema := newWriter(cluster)
		Expect(withSchema.reconcile(ctx, widget.GroupVersionKind(), client.ObjectKeyFromObject(widget), setPhase)).To(Succeed())
		Expect(withSchema.requests.Count("apply")).To(Equal(1), "%s", withSchema.requests)
	})
})
