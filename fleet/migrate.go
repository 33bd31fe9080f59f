package fleet

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/internal/inspect"
	"github.com/statusapply/statusapply/ownership"
)

// DefaultSeedManager is the field manager of the empty apply that makes the
// API server attribute an untracked object's fields to before-first-apply.
// It applies no fields, so it never appears in managedFields.
const DefaultSeedManager = "statusapply-migration"

// DefaultAttempts is how many times Migrate reads, rewrites and writes an
// object before giving up with ErrRetriesExhausted.
const DefaultAttempts = 5

// Migrator carries out a Plan against objects on the API server. It is safe
// for concurrent use; it holds no state between objects.
type Migrator struct {
	client      client.Client
	plan        Plan
	dryRun      bool
	attempts    int
	asRead      bool
	seedManager string
	progress    func(Progress)
	now         func() time.Time
	versions    map[schema.GroupKind]*Versions
}

// Option tunes a Migrator.
type Option func(*Migrator)

// WithDryRun chooses between reporting (true, the default) and writing
// (false). A dry run reads objects and computes the new ownership but writes
// nothing; an object without managedFields is seeded with a dry-run apply, so
// the server shows what it would attribute without storing it.
func WithDryRun(dryRun bool) Option {
	return func(m *Migrator) { m.dryRun = dryRun }
}

// WithAttempts sets how many read-rewrite-write rounds Migrate makes when the
// object changes under it (409); n below 1 means 1.
func WithAttempts(n int) Option {
	return func(m *Migrator) { m.attempts = max(n, 1) }
}

// WithObjectsAsRead says the objects given to Migrate were read from the
// API server moments ago, resourceVersion and managedFields included, as a
// list's items are: the first round rewrites the object as given instead
// of reading it again, which halves the requests of a migration and leaves
// a dry run with none. The write stays guarded by the resourceVersion of
// the object as given, so an object that changed since is refused by the
// API server (409) and the next round reads it. An object given without a
// resourceVersion is read first all the same. Metadata alone (a
// PartialObjectMetadata) serves unless an atomic list owned whole must
// translate into the items it holds in another version: such an object is
// refused with ErrUntranslatable, so give it whole.
func WithObjectsAsRead() Option {
	return func(m *Migrator) { m.asRead = true }
}

// WithSeedManager names the field manager of the seeding apply (see
// DefaultSeedManager).
func WithSeedManager(name string) Option {
	return func(m *Migrator) { m.seedManager = name }
}

// WithProgress registers a callback that MigrateAll and MigrateList call once
// per object, in order, from the calling goroutine. It must not block for
// long: the next object waits for it.
func WithProgress(f func(Progress)) Option {
	return func(m *Migrator) { m.progress = f }
}

// WithClock replaces time.Now for the timestamps of new Apply entries, for
// reproducible output.
func WithClock(now func() time.Time) Option {
	return func(m *Migrator) { m.now = now }
}

// WithVersions gives the Migrator each kind's CRD versions (VersionsOf),
// which it uses as Plan.Versions for objects of that kind when the plan
// carries none: a Migrator can then run one plan over several kinds.
func WithVersions(byKind map[schema.GroupKind]*Versions) Option {
	return func(m *Migrator) { m.versions = byKind }
}

// NewMigrator returns a Migrator for plan. c must read from the API server,
// not from a cache that strips managedFields, and needs get and patch on the
// resource (managedFields are only writable through the main resource: the
// status subresource accepts such a patch and silently ignores it) and patch
// on its status subresource (for seeding). The plan is validated here.
func NewMigrator(c client.Client, plan Plan, opts ...Option) (*Migrator, error) {
	if err := plan.Validate(); err != nil {
		return nil, err
	}
	m := &Migrator{
		client:      c,
		plan:        plan,
		dryRun:      true,
		attempts:    DefaultAttempts,
		seedManager: DefaultSeedManager,
		now:         time.Now,
	}
	for _, opt := range opts {
		opt(m)
	}
	return m, nil
}

// Result is what Migrate did, or in a dry run would do, to one object.
type Result struct {
	// Object names the object.
	Object ownership.ObjectRef
	// Before is the ownership as read (after seeding); nil when the object
	// had no fields for the server to attribute.
	Before *ownership.Ownership
	// After is the ownership as written, or as it would be in a dry run; it
	// equals Before when nothing changed. Nil when every entry was released.
	After *ownership.Ownership
	// Changed says whether ownership differs between Before and After.
	Changed bool
	// DryRun says whether the result was only computed.
	DryRun bool
	// Seeded says whether the object had no managedFields and the server
	// attributed its fields to before-first-apply first.
	Seeded bool
	// Attempts counts read-rewrite-write rounds (more than one after races).
	Attempts int
}

// String renders the result with the ownership before and after.
func (r *Result) String() string {
	var b strings.Builder
	verb := "unchanged"
	switch {
	case r.Changed && r.DryRun:
		verb = "would migrate"
	case r.Changed:
		verb = "migrated"
	}
	fmt.Fprintf(&b, "%s %s (attempts %d", verb, r.Object, r.Attempts)
	if r.Seeded {
		b.WriteString(", seeded")
	}
	b.WriteString(")\nbefore: ")
	b.WriteString(r.Before.String())
	if r.Changed {
		b.WriteString("after: ")
		b.WriteString(r.After.String())
	}
	return b.String()
}

// Migrate moves ownership on obj (only its kind, namespace and name are used;
// it is read again from the API server, unless WithObjectsAsRead) according
// to the plan, and returns what changed. It is idempotent: a second run finds nothing to move.
//
// The write is a JSON patch of metadata.managedFields that also replaces
// metadata.resourceVersion with the one read, so a write racing the
// migration makes the API server answer 409; Migrate then reads again and
// retries with client-go's retry.OnError and a jittered backoff, up to the
// configured attempts, after which it fails with ErrRetriesExhausted. Nothing a concurrent writer set is ever overwritten,
// because only managedFields are written.
//
// An object without managedFields is first seeded: an empty apply through
// the status subresource, guarded by resourceVersion, makes the server
// attribute every existing status field to before-first-apply, which the
// plan then handles like any legacy writer. Errors are *ObjectError.
func (m *Migrator) Migrate(ctx context.Context, obj client.Object) (*Result, error) {
	gvk, err := m.client.GroupVersionKindFor(obj)
	ref := ownership.ObjectRef{GVK: gvk, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if err != nil {
		return nil, &ownership.ObjectError{Object: ownership.RefOf(obj), Op: "migrating", Err: err}
	}
	fail := func(op string, err error) (*Result, error) {
		return nil, &ownership.ObjectError{Object: ref, Op: op, Err: err}
	}
	var (
		res     *Result
		attempt int
	)
	err = retry.OnError(m.backoff(), apierrors.IsConflict, func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		attempt++
		read := attempt > 1 || !m.asRead || obj.GetResourceVersion() == ""
		var err error
		res, err = m.attempt(ctx, obj, gvk, ref, read)
		return err
	})
	switch {
	case apierrors.IsConflict(err):
		return fail("migrating", fmt.Errorf("%w after %d attempts: %w", ownership.ErrRetriesExhausted, attempt, err))
	case err != nil:
		return fail("migrating", err)
	}
	res.Attempts = attempt
	return res, nil
}

// backoff spaces the read-rewrite-write rounds of one object: client-go's
// retry.DefaultRetry, with as many steps as the configured attempts.
func (m *Migrator) backoff() wait.Backoff {
	b := retry.DefaultRetry
	b.Steps = m.attempts
	return b
}

// attempt is one read-rewrite-write round; without read, it rewrites obj
// as given. A 409 from the server is returned as is, for Migrate to retry.
func (m *Migrator) attempt(ctx context.Context, obj client.Object, gvk schema.GroupVersionKind, ref ownership.ObjectRef,
	read bool) (*Result, error) {
	cur := deepCopy(obj)
	if read {
		if err := m.client.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
			return nil, fmt.Errorf("reading: %w", err)
		}
	}
	res := &Result{Object: ref, DryRun: m.dryRun}
	if len(cur.GetManagedFields()) == 0 {
		if err := m.seed(ctx, cur, gvk); err != nil {
			return nil, err
		}
		res.Seeded = true
		if len(cur.GetManagedFields()) == 0 {
			// No fields to attribute: nobody owns anything, nothing to move.
			return res, nil
		}
	}
	before, err := inspect.Entries(ref, cur.GetManagedFields())
	if err != nil {
		return nil, err
	}
	res.Before, res.After = before, before
	plan := m.plan
	if plan.Versions == nil {
		plan.Versions = m.versions[gvk.GroupKind()]
	}
	entries, changed, err := plan.Rewrite(cur, m.now())
	if err != nil {
		return nil, err
	}
	if !changed {
		return res, nil
	}
	res.Changed = true
	if res.After, err = inspectOrEmpty(ref, entries); err != nil {
		return nil, err
	}
	if m.dryRun {
		return res, nil
	}
	if err := m.write(ctx, cur, entries); err != nil {
		return nil, err
	}
	same, err := sameOwnership(cur.GetManagedFields(), entries)
	if err != nil {
		return nil, err
	}
	if !same && len(entries) > 0 {
		return nil, fmt.Errorf("the API server did not store the migrated managedFields (got %v)", cur.GetManagedFields())
	}
	if res.After, err = inspectOrEmpty(ref, cur.GetManagedFields()); err != nil {
		return nil, err
	}
	return res, nil
}

// seed makes the API server attribute cur's fields with an empty apply
// through the status subresource, guarded by cur's resourceVersion, and
// copies the resulting managedFields and resourceVersion into cur. In a dry
// run the apply is a dry run too.
func (m *Migrator) seed(ctx context.Context, cur client.Object, gvk schema.GroupVersionKind) error {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(cur.GetNamespace())
	u.SetName(cur.GetName())
	u.SetResourceVersion(cur.GetResourceVersion())
	opts := []client.SubResourceApplyOption{client.FieldOwner(m.seedManager)}
	if m.dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := m.client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		return fmt.Errorf("seeding managedFields: %w", err)
	}
	cur.SetManagedFields(u.GetManagedFields())
	cur.SetResourceVersion(u.GetResourceVersion())
	return nil
}

// write replaces cur's managedFields through the main resource, guarded by
// cur's resourceVersion (replaced rather than tested, so that a race is a 409
// from the storage layer, not a 422 from the patch). cur receives the
// server's answer.
func (m *Migrator) write(ctx context.Context, cur client.Object, entries []metav1.ManagedFieldsEntry) error {
	patch, err := ownership.ManagedFieldsPatch(entries, cur.GetResourceVersion())
	if err != nil {
		return err
	}
	if err := m.client.Patch(ctx, cur, client.RawPatch(types.JSONPatchType, patch)); err != nil {
		if apierrors.IsConflict(err) {
			return err
		}
		return fmt.Errorf("writing managedFields: %w", err)
	}
	return nil
}

// inspectOrEmpty is inspect.Entries, with empty managedFields meaning no
// owners (nil) rather than an error: after a migration that released
// everything, that is the truth, not a stripped object.
func inspectOrEmpty(ref ownership.ObjectRef, mfs []metav1.ManagedFieldsEntry) (*ownership.Ownership, error) {
	if len(mfs) == 0 {
		return nil, nil
	}
	return inspect.Entries(ref, mfs)
}
