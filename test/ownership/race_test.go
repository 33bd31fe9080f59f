package ownership

import (
	"context"
	"errors"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/fleet"
	"github.com/statusapply/statusapply/ownership"
	"github.com/statusapply/statusapply/test/suite"
	"github.com/statusapply/statusapply/test/widgets"
)

var _ = Describe("a write racing the migration", func() {
	var (
		ns  string
		key client.ObjectKey
	)

	plan := fleet.Plan{Conditions: map[string]string{"A": "readiness", "B": "networking", "C": "readiness"}}

	BeforeEach(func(ctx context.Context) {
		ns = suite.Namespace(ctx, env)
		key = createWidget(ctx, ns, "raced")
		legacyWrite(ctx, key, "Running", widgets.CS("A", "True", "B", "True"))
	})

	// racingClient runs race before each of the first n managedFields writes
	// (patches of the main resource), and counts the 409s the server answers.
	racingClient := func(n int, race func(ctx context.Context, i int)) (client.Client, *int) {
		base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
		Expect(err).NotTo(HaveOccurred())
		calls, conflicts := 0, 0
		return interceptor.NewClient(base, interceptor.Funcs{
			Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if calls < n {
					race(ctx, calls)
				}
				calls++
				err := c.Patch(ctx, obj, patch, opts...)
				if apierrors.IsConflict(err) {
					conflicts++
				}
				return err
			},
		}), &conflicts
	}

	It("retries after a 409 and keeps the racing write", func(ctx context.Context) {
		c, conflicts := racingClient(1, func(ctx context.Context, _ int) {
			legacyWrite(ctx, key, "", widgets.CS("C", "False"))
		})
		m, err := fleet.NewMigrator(c, plan, fleet.WithDryRun(false))
		Expect(err).NotTo(HaveOccurred())

		res, err := m.Migrate(ctx, getWidget(ctx, key))
		Expect(err).NotTo(HaveOccurred())
		Expect(*conflicts).To(Equal(1), "the first managedFields write was rejected")
		Expect(res.Attempts).To(Equal(2))

		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "True", "B", "True", "C", "False")), "no condition lost")
		o := inspect(ctx, key)
		Expect(o.ConditionTypes()).To(Equal(map[string][]string{"readiness": {"A", "C"}, "networking": {"B"}}),
			"the retry saw the racing writer's condition and moved it too")
	})

	It("fails, naming the object, when every attempt races, and loses nothing", func(ctx context.Context) {
		c, conflicts := racingClient(100, func(ctx context.Context, i int) {
			legacyWrite(ctx, key, "", widgets.CS(fmt.Sprintf("Race%d", i), "True"))
		})
		m, err := fleet.NewMigrator(c, plan, fleet.WithDryRun(false), fleet.WithAttempts(3))
		Expect(err).NotTo(HaveOccurred())

		_, err = m.Migrate(ctx, getWidget(ctx, key))
		Expect(err).To(MatchError(ownership.ErrRetriesExhausted))
		Expect(apierrors.IsConflict(err)).To(BeTrue(), "the last 409 is kept as the cause")
		var oe *ownership.ObjectError
		Expect(errors.As(err, &oe)).To(BeTrue())
		Expect(oe.Object.String()).To(Equal("Widget " + ns + "/raced"))
		Expect(*conflicts).To(Equal(3))

		Expect(conditions(ctx, key)).To(Equal(widgets.CS("A", "True", "B", "True", "Race0", "True", "Race1", "True", "Race2", "True")))
		Expect(inspect(ctx, key).ConditionTypes()).To(Equal(map[string][]string{
			legacyManager: {"A", "B", "Race0", "Race1", "Race2"},
		}), "ownership is untouched")
	})
})
