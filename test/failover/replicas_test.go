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

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// setUp is how a run's replicas run: their leader election timings, how
// many run at once, whether they are starved of CPU, and their fence.
type setUp struct {
	// Leader election timings. controller-runtime requires lease > renew >
	// 1.2 x retry.
	lease, renew, retry time.Duration
	// work is the most a reconcile waits between reading a Widget and
	// flushing its status, standing for real work; it is what makes a stop
	// land mid-reconcile.
	work time.Duration
	// count replicas run at any time (one more during a rolling replacement).
	count int
	// starved runs the replicas at nice 19 (beside CPU hogs the run starts).
	starved bool
	// fence is the replicas' fence: fenceGuarded, fenceLeaseOnly or fenceOff.
	fence string
}

// The replicas' fences.
const (
	fenceGuarded   = "guarded"    // --lease-fence (guarded entries, the default)
	fenceLeaseOnly = "lease-only" // --lease-fence --fence-guard=false
	fenceOff       = "off"        // --lease-fence=false
)

// normalSetUp is the soak's usual set-up; starvedSetUp the CPU-starved one,
// with the timings of a controller that takes over fast.
var (
	normalSetUp  = setUp{lease: 3 * time.Second, renew: 2 * time.Second, retry: 500 * time.Millisecond, work: 30 * time.Millisecond, count: 2, fence: fenceGuarded}
	starvedSetUp = setUp{lease: 2 * time.Second, renew: 1500 * time.Millisecond, retry: 250 * time.Millisecond, work: 50 * time.Millisecond, count: 3, starved: true, fence: fenceGuarded}
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

// replicas keeps su.count processes running: one that exits is replaced.
type replicas struct {
	ns, dir string
	su      setUp
	stats   *stats
	// usersMu serialises the API server users made for the replicas.
	usersMu sync.Mutex

	mu       sync.Mutex
	next     int
	live     map[string]*replica
	all      []*replica
	shutdown bool
	wg       sync.WaitGroup
}

func newReplicas(ns, dir string, su setUp, st *stats) *replicas {
	return &replicas{ns: ns, dir: dir, su: su, stats: st, live: map[string]*replica{}}
}

// kubeconfigFor writes a kubeconfig for an API server user of its own named
// name, so that the audit log names the replica behind each request.
func (rs *replicas) kubeconfigFor(name string) (string, error) {
	rs.usersMu.Lock()
	user, err := env.Environment().ControlPlane.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	rs.usersMu.Unlock()
	if err != nil {
		return "", err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(rs.dir, name+".kubeconfig")
	return path, os.WriteFile(path, kc, 0o600)
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
	kubeconfig, err := rs.kubeconfigFor(name)
	if err != nil {
		return nil, err
	}
	su := rs.su
	args := []string{binary,
		"--kubeconfig", kubeconfig,
		"--metrics-bind-address", addr,
		"--leader-elect",
		"--leader-election-namespace", rs.ns,
		"--leader-election-id", "widgets-failover",
		"--leader-election-identity", name,
		"--lease-duration", su.lease.String(),
		"--renew-deadline", su.renew.String(),
		"--retry-period", su.retry.String(),
		"--lease-fence=" + strconv.FormatBool(su.fence != fenceOff),
		"--fence-guard=" + strconv.FormatBool(su.fence == fenceGuarded),
		"--reconcile-work", su.work.String(),
	}
	if su.starved {
		// Every thread of the process inherits the lowest priority.
		args = append([]string{"nice", "-n", "19"}, args...)
	}
	r.cmd = exec.Command(args[0], args[1:]...)
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
		short := !rs.shutdown && len(rs.live) < rs.su.count
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

// What a replica logs when the fence drops a batch, when it stops a Flush,
// and when an apply's outcome is unknown.
const (
	fencedMessage  = "status not written: the lease cannot be proven held"
	stoppedMessage = "status flush stopped: the lease cannot be proven held"
	unknownMessage = "status apply outcome unknown"
)

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
