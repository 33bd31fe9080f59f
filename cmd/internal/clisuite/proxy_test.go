package clisuite

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
)

// failingProxy stands between the commands and the suite's API server and
// stops answering after a given number of requests for single objects of a
// namespace: it closes the connection of the request over the limit and
// every other, and listens no more, so that later requests are refused. The
// rest of the suite keeps its API server.
type failingProxy struct {
	srv *httptest.Server
	// kubeconfig reaches the API server through the proxy, which adds the
	// suite's credentials: plain HTTP on a local port.
	kubeconfig string
	// objects counts the requests for single objects that were forwarded.
	objects atomic.Int32
	down    sync.Once
}

// newFailingProxy starts a proxy that forwards allow requests under
// /namespaces/NS/widgets/ and fails from the next one on.
func newFailingProxy(ns string, allow int32) *failingProxy {
	GinkgoHelper()
	p := &failingProxy{}
	p.srv, p.kubeconfig = startProxy("failing", func(w http.ResponseWriter, r *http.Request, forward http.Handler) {
		if strings.Contains(r.URL.Path, "/namespaces/"+ns+"/widgets/") && p.objects.Add(1) > allow {
			p.stop(w)
			return
		}
		forward.ServeHTTP(w, r)
	})
	return p
}

// startProxy serves serve in front of the suite's API server, forward
// passing a request on, and writes a kubeconfig that reaches it as name:
// plain HTTP on a local port, the proxy adding the suite's credentials.
func startProxy(name string, serve func(w http.ResponseWriter, r *http.Request, forward http.Handler)) (
	srv *httptest.Server, kubeconfig string) {
	GinkgoHelper()
	target, err := url.Parse(env.Config.Host)
	Expect(err).NotTo(HaveOccurred())
	transport, err := rest.TransportFor(env.Config)
	Expect(err).NotTo(HaveOccurred())
	forward := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) }, Transport: transport}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, r, forward) }))
	DeferCleanup(srv.Close)
	kubeconfig = filepath.Join(GinkgoT().TempDir(), name+".kubeconfig")
	Expect(os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: `+srv.URL+`
contexts:
- name: proxy
  context: {cluster: proxy, user: proxy}
users:
- name: proxy
  user: {}
current-context: proxy
`), 0o600)).To(Succeed())
	return srv, kubeconfig
}

// stop drops the connection of the request being served, stops listening
// and closes every other connection.
func (p *failingProxy) stop(w http.ResponseWriter) {
	p.down.Do(func() {
		_ = p.srv.Listener.Close()
		p.srv.CloseClientConnections()
	})
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}

// watchingProxy stands between the commands and the suite's API server,
// counts the requests for the Widgets of one namespace by method (a list is
// a GET of the collection, counted apart), and lets a spec hold or refuse
// the requests for single objects.
type watchingProxy struct {
	kubeconfig string

	mu sync.Mutex
	// counts are per method for single objects, "LIST" for the collection.
	counts map[string]int
	// inFlight and maxInFlight count requests for single objects being
	// served.
	inFlight, maxInFlight int
	// hold, when set, is called for every request for a single object
	// before it is forwarded, with its number (from 1); it may block, at
	// most until the request's context ends (cancelled).
	// Returning false answers 403 Forbidden instead of forwarding.
	hold func(r *http.Request, n int) bool
	n    int
}

// newWatchingProxy starts a proxy for the Widgets of ns.
func newWatchingProxy(ns string) *watchingProxy {
	GinkgoHelper()
	p := &watchingProxy{counts: map[string]int{}}
	collection := "/namespaces/" + ns + "/widgets"
	_, p.kubeconfig = startProxy("watching", func(w http.ResponseWriter, r *http.Request, forward http.Handler) {
		switch {
		case strings.HasSuffix(r.URL.Path, collection):
			p.mu.Lock()
			p.counts["LIST"]++
			p.mu.Unlock()
		case strings.Contains(r.URL.Path, collection+"/"):
			p.mu.Lock()
			p.counts[r.Method]++
			p.n++
			n, hold := p.n, p.hold
			p.inFlight++
			p.maxInFlight = max(p.maxInFlight, p.inFlight)
			p.mu.Unlock()
			defer func() {
				p.mu.Lock()
				p.inFlight--
				p.mu.Unlock()
			}()
			// With its body read, the server notices when the client goes
			// away and ends the request's context, which a hold waits for.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			if hold != nil && !hold(r, n) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusForbidden)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,` +
					`"message":"widgets.demo.statusapply.io is forbidden: User \"proxy\" cannot patch resource \"widgets\""}`))
				return
			}
		}
		forward.ServeHTTP(w, r)
	})
	return p
}

// take returns the counts and the most requests for single objects served
// at once since the last take, and starts counting afresh.
func (p *watchingProxy) take() (counts map[string]int, maxInFlight int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	counts, maxInFlight = p.counts, p.maxInFlight
	p.counts, p.maxInFlight, p.n = map[string]int{}, 0, 0
	return counts, maxInFlight
}

// setHold replaces the hold function.
func (p *watchingProxy) setHold(hold func(r *http.Request, n int) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = hold
}

// cancelled waits until the client of r gave up on it, or a minute.
func cancelled(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Minute):
	}
}
