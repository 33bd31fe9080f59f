package soak

import (
	"context"
	"net/http"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/ssa"
	"github.com/statusapply/statusapply/test/widgets"
)

// process is one controller process in spirit: its own HTTP connections,
// client and Applier. Writers that share a process share its Applier, as the
// reconcilers of one manager do.
type process struct {
	name      string
	http      *http.Client
	client    client.Client
	applier   *ssa.Applier
	requests  *apiserver.Requests
	responses *apiserver.Responses
}

// newProcess builds a process talking to cfg. Client-side rate limiting is
// off: the soak wants the API server, not the client, to be the bottleneck.
// funcs, when set, intercept the client's calls (the burst fault's hook).
func newProcess(name string, cfg *rest.Config, funcs *interceptor.Funcs, opts ...ssa.Option) (*process, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = -1, 0
	cfg.Timeout = requestTimeout
	cfg, responses := apiserver.WithResponses(cfg)
	cfg, requests := apiserver.WithRequests(cfg)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	scheme, err := apiserver.NewScheme()
	if err != nil {
		return nil, err
	}
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme, HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	var c client.Client = wc
	if funcs != nil {
		c = interceptor.NewClient(wc, *funcs)
	}
	a, err := widgets.NewApplier(c, opts...)
	if err != nil {
		return nil, err
	}
	return &process{name: name, http: hc, client: c, applier: a, requests: requests, responses: responses}, nil
}

// close drops the process's idle connections, so that their goroutines end.
func (p *process) close() { p.http.CloseIdleConnections() }

// get reads an object as a reconcile does before deciding, bounded by
// requestTimeout.
func (p *process) get(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	return p.client.Get(ctx, key, obj)
}
