package clisuite

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

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
	target, err := url.Parse(env.Config.Host)
	Expect(err).NotTo(HaveOccurred())
	transport, err := rest.TransportFor(env.Config)
	Expect(err).NotTo(HaveOccurred())
	p := &failingProxy{}
	forward := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
		},
		Transport: transport,
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/namespaces/"+ns+"/widgets/") && p.objects.Add(1) > allow {
			p.stop(w)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	DeferCleanup(p.srv.Close)
	p.kubeconfig = filepath.Join(GinkgoT().TempDir(), "proxy.kubeconfig")
	Expect(os.WriteFile(p.kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: proxy
  cluster:
    server: `+p.srv.URL+`
contexts:
- name: proxy
  context: {cluster: proxy, user: proxy}
users:
- name: proxy
  user: {}
current-context: proxy
`), 0o600)).To(Succeed())
	return p
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
