package contention

import (
	"context"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/suite"
)

var _ = Describe("writers contending for one object's status", func() {
	var ns string

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
	})

	Context("all observing before any writes, round after round", func() {
		It("loses nothing and is refused nothing through statusapply", func(ctx context.Context) {
			ws := newWriters(env.Config)
			key := createWidget(ctx, ws[0].client, ns, "shared")
			resetCounters(ws)

			lost, err := runInRounds(ctx, ws, key, env.Client, applyChange)
			Expect(err).NotTo(HaveOccurred())
			Expect(lost).To(BeZero(), "after every round, every writer's change of that round is on the object")
			expectStatusapplyOutcome(ctx, ws, key)
		})

		It("control: whole-list merge patches from stale snapshots lose updates", func(ctx context.Context) {
			ws := newWriters(env.Config)
			key := createWidget(ctx, ws[0].client, ns, "shared")

			lost, err := runInRounds(ctx, ws, key, env.Client, mergePatchChange)
			Expect(err).NotTo(HaveOccurred(), "every patch was accepted")
			AddReportEntry("merge patch: writer changes lost", lost)
			Expect(lost).To(BeNumerically(">", 0),
				"vacuous: the unsafe approach lost nothing in %d rounds, so the interleaving did not happen", changes)
		})

		It("control: optimistically locked merge patches lose nothing but are refused and retried", func(ctx context.Context) {
			ws := newWriters(env.Config)
			key := createWidget(ctx, ws[0].client, ns, "shared")
			resetCounters(ws)

			lost, err := runInRounds(ctx, ws, key, env.Client, lockedMergePatchChange)
			Expect(err).NotTo(HaveOccurred())
			Expect(lost).To(BeZero())
			conflicts, patches := 0, 0
			for _, w := range ws {
				conflicts += w.responses.Count("patch", 409)
				patches += w.requests.Count("patch")
			}
			AddReportEntry("locked merge patch: 409s", conflicts)
			Expect(conflicts).To(BeNumerically(">", 0), "vacuous: no writer was ever refused")
			Expect(patches).To(Equal(writerCount*changes+conflicts), "every 409 cost one more patch (and one more GET)")
		})
	})

	Context("each writer in its own goroutine, uncoordinated", func() {
		It("loses nothing and is refused nothing through statusapply", func(ctx context.Context) {
			ws := newWriters(env.Config)
			key := createWidget(ctx, ws[0].client, ns, "shared")
			resetCounters(ws)

			Expect(runFreely(ctx, ws, key, applyChange)).To(Succeed())
			expectStatusapplyOutcome(ctx, ws, key)
		})
	})

	Describe("across two API servers sharing one etcd", Ordered, func() {
		var second *rest.Config

		BeforeAll(func(ctx context.Context) {
			dir, err := apiserver.BinaryAssetsDirectory()
			Expect(err).NotTo(HaveOccurred())
			s2 := &envtest.APIServer{
				EtcdURL: env.Environment().ControlPlane.Etcd.URL,
				Path:    filepath.Join(dir, "kube-apiserver"),
			}
			Expect(s2.Start()).To(Succeed())
			DeferCleanup(s2.Stop)
			user, err := (&envtest.ControlPlane{APIServer: s2}).AddUser(envtest.User{Name: "second-admin", Groups: []string{"system:masters"}}, nil)
			Expect(err).NotTo(HaveOccurred())
			second = user.Config()
			Expect(second.Host).NotTo(Equal(env.Config.Host), "a different API server")

			// The second server learns the CRDs from etcd when it starts; wait
			// until it serves Widgets.
			c, err := client.New(second, client.Options{Scheme: env.Scheme})
			Expect(err).NotTo(HaveOccurred())
			Eventually(func(ctx context.Context) error {
				return c.List(ctx, &v1alpha1.WidgetList{})
			}).WithContext(ctx).Should(Succeed())
		})

		It("loses nothing and is refused nothing through statusapply", func(ctx context.Context) {
			ws := newWriters(env.Config, second)
			key := createWidget(ctx, ws[1].client, ns, "shared")
			resetCounters(ws)

			lost, err := runInRounds(ctx, ws, key, env.Client, applyChange)
			Expect(err).NotTo(HaveOccurred())
			Expect(lost).To(BeZero())
			expectStatusapplyOutcome(ctx, ws, key)
		})

		It("control: whole-list merge patches from stale snapshots lose updates", func(ctx context.Context) {
			ws := newWriters(env.Config, second)
			key := createWidget(ctx, ws[1].client, ns, "shared")

			lost, err := runInRounds(ctx, ws, key, env.Client, mergePatchChange)
			Expect(err).NotTo(HaveOccurred())
			AddReportEntry("merge patch over two API servers: writer changes lost", lost)
			Expect(lost).To(BeNumerically(">", 0), "vacuous: the unsafe approach lost nothing in %d rounds", changes)
		})
	})
})
