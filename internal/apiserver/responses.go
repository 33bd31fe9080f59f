package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// Responses counts the answers a client receives, by verb (as Requests names
// them) and HTTP status code. Requests counts what was sent; Responses tells a
// 409 from a 200, so that a spec can assert that no write was refused, or that
// an unsafe approach really was.
type Responses struct {
	mu     sync.Mutex
	counts map[responseKey]int
}

type responseKey struct {
	verb string
	code int
}

// Count returns how many responses with code were received for verb.
func (r *Responses) Count(verb string, code int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[responseKey{verb, code}]
}

// CountCode returns how many responses with code were received, whatever the
// verb, discovery left out.
func (r *Responses) CountCode(code int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k, c := range r.counts {
		if k.code == code && k.verb != "discovery" {
			n += c
		}
	}
	return n
}

// Succeeded returns how many 2xx responses were received for verb.
func (r *Responses) Succeeded(verb string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k, c := range r.counts {
		if k.verb == verb && k.code >= 200 && k.code < 300 {
			n += c
		}
	}
	return n
}

// Failed returns how many requests for verb got no response at all (the
// connection failed), which Count reports under code 0.
func (r *Responses) Failed(verb string) int { return r.Count(verb, 0) }

// Reset sets every count to zero.
func (r *Responses) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts = nil
}

// String prints the counts as "verb code: n", for failure messages.
func (r *Responses) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	parts := make([]string, 0, len(r.counts))
	for k, c := range r.counts {
		if k.verb != "discovery" {
			parts = append(parts, fmt.Sprintf("%s %d: %d", k.verb, k.code, c))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (r *Responses) record(verb string, code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.counts == nil {
		r.counts = map[responseKey]int{}
	}
	r.counts[responseKey{verb, code}]++
}

type responseTransport struct {
	next      http.RoundTripper
	responses *Responses
}

func (t responseTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	verb := verbOf(req)
	resp, err := t.next.RoundTrip(req)
	code := 0
	if err == nil {
		code = resp.StatusCode
	}
	t.responses.record(verb, code)
	return resp, err
}

// verbOf names req's verb the way Requests counts it, so that both counters
// agree.
func verbOf(req *http.Request) string {
	probe := &Requests{}
	probe.record(req)
	for verb := range probe.counts {
		return verb
	}
	return ""
}

// WithResponses returns a copy of cfg whose clients count their responses in
// the returned Responses. Pass the copy to CountingClientFor to count both
// requests and responses.
func WithResponses(cfg *rest.Config) (*rest.Config, *Responses) {
	responses := &Responses{}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return responseTransport{next: rt, responses: responses} })
	return cfg, responses
}
