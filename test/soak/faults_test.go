package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/statusapply/statusapply/api/v1alpha1"
	acv1alpha1 "github.com/statusapply/statusapply/api/v1alpha1/applyconfiguration/api/v1alpha1"
	"github.com/statusapply/statusapply/internal/apiserver"
	"github.com/statusapply/statusapply/test/widgets"
)

// newProxy starts an in-process toxiproxy in front of the API server at
// apiServerURL; clients that should meet network faults talk to the returned
// address instead.
func newProxy(apiServerURL string) (*toxiproxy.Proxy, error) {
	u, err := url.Parse(apiServerURL)
	if err != nil {
		return nil, err
	}
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(server, "kube-apiserver", "127.0.0.1:0", u.Host)
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("starting the fault-injection proxy: %w", err)
	}
	return p, nil
}

// toxic is a toxiproxy toxic as its JSON API takes it.
type toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// toxicFor is the toxic a proxy fault adds.
func toxicFor(name string, f fault) toxic {
	switch f.kind {
	case faultLatency:
		return toxic{Name: name, Type: "latency", Stream: "downstream", Toxicity: f.toxicity,
			Attributes: map[string]any{"latency": f.latency.Milliseconds(), "jitter": f.jitter.Milliseconds()}}
	case faultTimeout:
		// Data is dropped, and the connection closed once the fault ends.
		return toxic{Name: name, Type: "timeout", Stream: "upstream", Toxicity: f.toxicity,
			Attributes: map[string]any{"timeout": f.length.Milliseconds()}}
	default: // faultReset
		return toxic{Name: name, Type: "reset_peer", Stream: "upstream", Toxicity: f.toxicity,
			Attributes: map[string]any{"timeout": 0}}
	}
}

// injector plays a schedule against the run.
type injector struct {
	r     *run
	proxy *toxiproxy.Proxy
	// restarts are one at a time; so are second API servers.
	restartMu sync.Mutex
	wg        sync.WaitGroup
}

// play injects each fault at its time until the schedule or ctx ends, then
// waits for the faults that last to end. Every fault ends cleanly even when ctx
// ends early: toxics are removed, the API server is up, the second one stopped.
func (in *injector) play(ctx context.Context, s schedule) {
	start := time.Now()
	for i, f := range s {
		sleepCtx(ctx, time.Until(start.Add(f.at)))
		if ctx.Err() != nil {
			break
		}
		in.wg.Go(func() { in.inject(ctx, i, f) })
	}
	in.wg.Wait()
}

func (in *injector) inject(ctx context.Context, i int, f fault) {
	r := in.r
	switch f.kind {
	case faultLatency, faultTimeout, faultReset:
		t := toxicFor(fmt.Sprintf("%s-%d", f.kind, i), f)
		body, err := json.Marshal(t)
		if err == nil {
			_, err = in.proxy.Toxics.AddToxicJson(bytes.NewReader(body))
		}
		if err != nil {
			r.fail("adding toxic %s: %v", t.Name, err)
			return
		}
		r.stats.fault(f.kind)
		sleepCtx(ctx, f.length)
		if err := in.proxy.Toxics.RemoveToxic(context.Background(), t.Name); err != nil {
			r.fail("removing toxic %s: %v", t.Name, err)
		}
	case faultRestart:
		in.restartMu.Lock()
		defer in.restartMu.Unlock()
		apiServer := r.env.Environment().ControlPlane.APIServer
		// The API server drains in-flight requests before it exits; a request
		// stuck behind a timeout toxic can hold it past envtest's stop timeout,
		// after which envtest kills it: a crash rather than a clean stop,
		// which is a fault worth having too.
		if err := apiServer.Stop(); err != nil {
			if !strings.Contains(err.Error(), "timeout waiting for process") {
				r.fail("stopping the API server: %v", err)
			}
			r.stats.killed.Add(1)
		}
		r.stats.fault(f.kind)
		if err := apiServer.Start(); err != nil {
			r.fail("starting the API server again: %v", err)
		}
	case faultBurst:
		for _, o := range f.objects {
			r.bursts[o].Add(1)
		}
		r.stats.fault(f.kind)
		sleepCtx(ctx, f.length)
		for _, o := range f.objects {
			r.bursts[o].Add(-1)
		}
	case faultRecreate:
		for _, o := range f.objects {
			if in.recreate(ctx, o) {
				r.stats.fault(f.kind)
			}
		}
	case faultCancel:
		r.cancelling.Add(1)
		sleepCtx(ctx, f.length)
		r.cancelling.Add(-1)
	case faultSecondServer:
		in.secondServer(ctx, f)
	}
}

// recreate deletes object o and creates it again under its name, directly on
// the first API server (which may be restarting: then it tries again).
func (in *injector) recreate(ctx context.Context, o int) bool {
	r := in.r
	key := r.key(o)
	if err := r.admin.client.Delete(ctx, &v1alpha1.Widget{ObjectMeta: objectMeta(key)}); err != nil {
		return false
	}
	return r.ensure(context.WithoutCancel(ctx), o) == nil
}

// ensure creates object o if it is missing, trying for up to a minute.
func (r *run) ensure(ctx context.Context, o int) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := r.admin.client.Get(ctx, r.key(o), &v1alpha1.Widget{})
		if apierrors.IsNotFound(err) {
			_, err = widgets.Create(ctx, r.admin.client, r.ns, r.key(o).Name)
		}
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
		if ctx.Err() != nil {
			r.fail("creating %s again: %v", r.key(o).Name, err)
			return err
		}
		sleepCtx(ctx, 250*time.Millisecond)
	}
}

// secondServer starts a second API server on the same etcd, moves the writers
// that have a second process onto it for the fault's length, then moves them
// back and stops it.
func (in *injector) secondServer(ctx context.Context, f fault) {
	r := in.r
	dir, err := apiserver.BinaryAssetsDirectory()
	if err != nil {
		r.fail("second API server: %v", err)
		return
	}
	s2 := &envtest.APIServer{EtcdURL: r.env.Environment().ControlPlane.Etcd.URL, Path: filepath.Join(dir, "kube-apiserver")}
	if err := s2.Start(); err != nil {
		r.fail("starting the second API server: %v", err)
		return
	}
	defer func() {
		r.onSecond.Store(false)
		if err := s2.Stop(); err != nil {
			r.fail("stopping the second API server: %v", err)
		}
	}()
	user, err := (&envtest.ControlPlane{APIServer: s2}).AddUser(envtest.User{Name: "soak-second", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		r.fail("second API server user: %v", err)
		return
	}
	procs, err := r.secondProcesses(user.Config())
	if err != nil {
		r.fail("second API server processes: %v", err)
		return
	}
	// The second server learns the CRDs from etcd as it starts.
	for ctx.Err() == nil {
		if err := procs[0].client.List(ctx, &v1alpha1.WidgetList{}, client.InNamespace(r.ns)); err == nil {
			break
		}
		sleepCtx(ctx, 250*time.Millisecond)
	}
	if ctx.Err() != nil {
		return
	}
	r.stats.fault(f.kind)
	r.onSecond.Store(true)
	sleepCtx(ctx, f.length)
}

// burstFuncs make a plan creator's client meet a burst: while its object is
// bursting, another manager changes the object right before each of the plan
// creator's status applies, so every guarded attempt is stale.
func (r *run) burstFuncs() *interceptor.Funcs {
	return &interceptor.Funcs{
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			if o, ok := r.burstingObject(obj); ok {
				n := r.stats.burstWrites.Add(1)
				other := acv1alpha1.Widget(r.key(o).Name, r.ns).WithStatus(acv1alpha1.WidgetStatus().WithReadyReplicas(int32(n % 1000)))
				bctx, cancel := context.WithTimeout(ctx, requestTimeout)
				_ = r.admin.client.Status().Apply(bctx, other, client.FieldOwner(managerBurst))
				cancel()
			}
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	}
}
