package failover

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Leader election timings of the replicas: short, so that a run sees many
// takeovers. controller-runtime requires lease > renew > 1.2 x retry.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 500 * time.Millisecond
	// reconcileWork is the most a reconcile waits between reading a Widget and
	// flushing its status, standing for real work; it is what makes a stop
	// land mid-reconcile.
	reconcileWork = 30 * time.Millisecond
	// replicaCount replicas run at any time (one more during a rolling
	// replacement).
	replicaCount = 2
)

// replica is one process of the example manager.
type replica struct {
	name    string
	cmd     *exec.Cmd
	metrics string // host:port of its metrics endpoint
	log     string
	done    chan struct{}
	stopped bool // SIGSTOPped and not yet continued

	peakHeap float64 // bytes, the highest heap scraped
	applies  float64 // statusapply_applies_total, last scraped
}

// replicas keeps replicaCount processes running: one that exits is replaced.
type replicas struct {
	ns, dir string
	fence   bool
	stats   *stats

	mu       sync.Mutex
	next     int
	live     map[string]*replica
	all      []*replica
	shutdown bool
	wg       sync.WaitGroup
}

func newReplicas(ns, dir string, fence bool, st *stats) *replicas {
	return &replicas{ns: ns, dir: dir, fence: fence, stats: st, live: map[string]*replica{}}
}

// freePort returns a loopback address nobody listens on.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// spawn starts one more replica.
func (rs *replicas) spawn() (*replica, error) {
	rs.mu.Lock()
	if rs.shutdown {
		rs.mu.Unlock()
		return nil, fmt.Errorf("shutting down")
	}
	rs.next++
	name := fmt.Sprintf("replica-%d", rs.next)
	rs.mu.Unlock()
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	r := &replica{name: name, metrics: addr, log: filepath.Join(rs.dir, name+".log"), done: make(chan struct{})}
	logf, err := os.Create(r.log)
	if err != nil {
		return nil, err
	}
	r.cmd = exec.Command(binary,
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", addr,
		"--leader-elect",
		"--leader-election-namespace", rs.ns,
		"--leader-election-id", "widgets-failover",
		"--leader-election-identity", name,
		"--lease-duration", leaseDuration.String(),
		"--renew-deadline", renewDeadline.String(),
		"--retry-period", retryPeriod.String(),
		"--lease-fence="+strconv.FormatBool(rs.fence),
		"--reconcile-work", reconcileWork.String(),
	)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, err
	}
	rs.mu.Lock()
	rs.live[name] = r
	rs.all = append(rs.all, r)
	rs.mu.Unlock()
	rs.stats.spawned.Add(1)
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		_ = r.cmd.Wait()
		_ = logf.Close()
		close(r.done)
		rs.mu.Lock()
		delete(rs.live, name)
		short := !rs.shutdown && len(rs.live) < replicaCount
		rs.mu.Unlock()
		rs.stats.exited.Add(1)
		if short {
			// A replica that exits (killed, or one that lost its lease) is
			// replaced, as a Deployment would.
			time.Sleep(200 * time.Millisecond)
			_, _ = rs.spawn()
		}
	}()
	return r, nil
}

// byName returns the live replica called name.
func (rs *replicas) byName(name string) *replica {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.live[name]
}

// oldest returns the live replica started first.
func (rs *replicas) oldest() *replica {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var o *replica
	for _, r := range rs.all {
		if rs.live[r.name] == r {
			o = r
			break
		}
	}
	return o
}

func (rs *replicas) signal(r *replica, sig syscall.Signal) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	switch sig {
	case syscall.SIGSTOP:
		r.stopped = true
	case syscall.SIGCONT:
		r.stopped = false
	}
	_ = r.cmd.Process.Signal(sig)
}

// stop ends r gracefully (SIGTERM), killing it when it takes longer than 30 s.
func (rs *replicas) stop(r *replica) {
	rs.signal(r, syscall.SIGCONT)
	rs.signal(r, syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		rs.signal(r, syscall.SIGKILL)
		<-r.done
	}
}

// close kills every replica and waits for them.
func (rs *replicas) close() {
	rs.mu.Lock()
	rs.shutdown = true
	live := make([]*replica, 0, len(rs.live))
	for _, r := range rs.live {
		live = append(live, r)
	}
	rs.mu.Unlock()
	for _, r := range live {
		_ = r.cmd.Process.Signal(syscall.SIGKILL)
	}
	rs.wg.Wait()
}

// scrape reads every live replica's heap and apply count from its metrics
// endpoint, until ctx ends.
func (rs *replicas) scrape(ctx context.Context) {
	hc := &http.Client{Timeout: time.Second}
	for {
		rs.mu.Lock()
		live := make([]*replica, 0, len(rs.live))
		for _, r := range rs.live {
			if !r.stopped {
				live = append(live, r)
			}
		}
		rs.mu.Unlock()
		for _, r := range live {
			heap, applies, ok := scrapeOne(ctx, hc, r.metrics)
			if !ok {
				continue
			}
			rs.mu.Lock()
			r.peakHeap = max(r.peakHeap, heap)
			r.applies = max(r.applies, applies)
			rs.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func scrapeOne(ctx context.Context, hc *http.Client, addr string) (heap, applies float64, ok bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, 0, false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0, false
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "go_memstats_heap_alloc_bytes "):
			heap, _ = strconv.ParseFloat(strings.Fields(line)[1], 64)
			ok = true
		case strings.HasPrefix(line, "statusapply_applies_total{"):
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			applies += v
		}
	}
	return heap, applies, ok
}

// heapFigures returns the peak heap of every replica that was scraped, in
// MiB, and the sum of the applies they reported.
func (rs *replicas) heapFigures() (peaks []float64, applies float64) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.all {
		if r.peakHeap > 0 {
			peaks = append(peaks, r.peakHeap/(1<<20))
		}
		applies += r.applies
	}
	return peaks, applies
}

// tail returns the last n lines of r's log.
func tail(r *replica, n int) string {
	b, err := os.ReadFile(r.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// fencedMessage is what a replica logs when the fence drops a batch.
const fencedMessage = "status not written: the lease cannot be proven held"

// countInLogs counts the lines of every replica's log that hold s.
func (rs *replicas) countInLogs(s string) int {
	rs.mu.Lock()
	all := append([]*replica(nil), rs.all...)
	rs.mu.Unlock()
	n := 0
	for _, r := range all {
		b, err := os.ReadFile(r.log)
		if err == nil {
			n += strings.Count(string(b), s)
		}
	}
	return n
}
