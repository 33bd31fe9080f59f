package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/api/v1alpha1"
	"github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
)

// Harness is what every scenario needs: the API server, the schemes (the
// example API's and the Cluster API wrapper's) and the Widget schema.
type Harness struct {
	Env        *apiserver.Env
	CAPIScheme *runtime.Scheme
	TC         managedfields.TypeConverter
}

// NewHarness prepares a Harness on a running Env.
func NewHarness(env *apiserver.Env) (*Harness, error) {
	capi, err := NewCAPIScheme()
	if err != nil {
		return nil, err
	}
	return &Harness{Env: env, CAPIScheme: capi, TC: applyconfiguration.NewTypeConverter(env.Scheme)}, nil
}

// Client returns a fresh client whose requests and responses are counted, the
// way one controller process would hold one.
func (h *Harness) Client() (client.Client, *apiserver.Requests, *apiserver.Responses, error) {
	cfg, responses := apiserver.WithResponses(h.Env.Config)
	c, requests, err := h.Env.CountingClientFor(cfg)
	return c, requests, responses, err
}

// CAPIClient is Client with the scheme that maps Widgets to CAPIWidget.
func (h *Harness) CAPIClient() (client.Client, *apiserver.Requests, *apiserver.Responses, error) {
	env := *h.Env // the same API server, another scheme
	env.Scheme = h.CAPIScheme
	cfg, responses := apiserver.WithResponses(h.Env.Config)
	c, requests, err := env.CountingClientFor(cfg)
	return c, requests, responses, err
}

// Applier returns an Applier on c that knows the Widget schema and registers
// no metrics (several Appliers live in one process here).
func (h *Harness) Applier(c client.Client) (*ssa.Applier, error) {
	return ssa.NewApplier(c, ssa.WithTypeConverter(h.TC), ssa.WithRegisterer(nil))
}

// Config is the API server's admin config, for watches and uncounted reads.
func (h *Harness) Config() *rest.Config { return h.Env.Config }

// CreateWidget creates a Widget and returns it as stored.
func (h *Harness) CreateWidget(ctx context.Context, ns, name string) (*v1alpha1.Widget, error) {
	w := &v1alpha1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: v1alpha1.WidgetSpec{Replicas: 1}}
	if err := h.Env.Client.Create(ctx, w); err != nil {
		return nil, fmt.Errorf("creating widget %s/%s: %w", ns, name, err)
	}
	return w, nil
}

// newerOrEqual compares two resourceVersions. They are opaque to clients in
// general; on one etcd they are revisions, which is all a benchmark needs to
// tell when a cache or a watch has caught up.
func newerOrEqual(rv, than string) bool {
	a, errA := strconv.ParseUint(rv, 10, 64)
	b, errB := strconv.ParseUint(than, 10, 64)
	return errA == nil && errB == nil && a >= b
}

// waitFor polls cond every millisecond until it holds or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}
