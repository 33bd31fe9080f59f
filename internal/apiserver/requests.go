package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Requests counts the requests a client sends, by verb: get, create, update,
// apply (server-side apply), patch (any other patch), delete. Discovery and
// OpenAPI requests, which a client makes once per group to map kinds to
// resources, are counted apart as "discovery", so that "no GET" assertions are
// about objects.
type Requests struct {
	mu     sync.Mutex
	counts map[string]int
}

// Count returns how many requests of verb were sent.
func (r *Requests) Count(verb string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[verb]
}

// Total returns how many requests were sent, discovery left out.
func (r *Requests) Total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for verb, c := range r.counts {
		if verb != "discovery" {
			n += c
		}
	}
	return n
}

// Snapshot returns the counts by verb.
func (r *Requests) Snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

// Reset sets every count to zero.
func (r *Requests) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts = nil
}

// String prints the counts, for failure messages.
func (r *Requests) String() string { return fmt.Sprint(r.Snapshot()) }

func (r *Requests) record(req *http.Request) {
	verb := strings.ToLower(req.Method)
	switch req.Method {
	case http.MethodGet:
		verb = "get"
		if req.URL.Query().Has("watch") {
			verb = "watch"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
			verb = "apply"
		}
	}
	if isDiscovery(req.URL.Path) {
		verb = "discovery"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[string]int{}
	}
	r.counts[verb]++
}

// isDiscovery reports whether path is a discovery or OpenAPI document rather
// than a resource: /api, /api/v1, /apis, /apis/group, /apis/group/version, /openapi/...
func isDiscovery(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return true
}

type countingTransport struct {
	next     http.RoundTripper
	requests *Requests
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.requests.record(req)
	return t.next.RoundTrip(req)
}

// CountingClient returns an uncached client for the Env whose requests are
// counted, and the counter. Lists are counted as gets.
func (e *Env) CountingClient() (client.Client, *Requests, error) {
	return e.CountingClientFor(e.Config)
}

// CountingClientFor is CountingClient for another rest.Config (another user or
// another API server).
func (e *Env) CountingClientFor(cfg *rest.Config) (client.Client, *Requests, error) {
	cfg, requests := WithRequests(cfg)
	c, err := client.New(cfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		return nil, nil, err
	}
	return c, requests, nil
}

// WithRequests returns a copy of cfg whose clients count their requests in the
// returned Requests, for callers that build their own HTTP client from the
// config (to close its connections when done) rather than use CountingClientFor.
func WithRequests(cfg *rest.Config) (*rest.Config, *Requests) {
	requests := &Requests{}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt, requests: requests} })
	return cfg, requests
}
