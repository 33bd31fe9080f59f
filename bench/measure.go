package bench

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"
)

// Usage is what the process spent over a stretch of work: CPU (user and
// system, all threads, this process only: the API server and etcd run in
// processes of their own) and heap allocations.
type Usage struct {
	CPU     time.Duration
	Mallocs uint64
	Bytes   uint64
}

// Add sums two stretches.
func (u Usage) Add(o Usage) Usage {
	return Usage{CPU: u.CPU + o.CPU, Mallocs: u.Mallocs + o.Mallocs, Bytes: u.Bytes + o.Bytes}
}

// UsageMeter takes a reading at Start and the difference at Stop. The
// readings themselves (getrusage, ReadMemStats) happen outside the measured
// stretch, so that summing many short stretches leaves the harness out.
type UsageMeter struct {
	cpu time.Duration
	ms  runtime.MemStats
}

// Start takes the first reading.
func (m *UsageMeter) Start() {
	runtime.ReadMemStats(&m.ms)
	m.cpu = processCPU()
}

// Stop returns the usage since Start.
func (m *UsageMeter) Stop() Usage {
	cpu := processCPU()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return Usage{CPU: cpu - m.cpu, Mallocs: after.Mallocs - m.ms.Mallocs, Bytes: after.TotalAlloc - m.ms.TotalAlloc}
}

// processCPU is the user plus system time of the whole process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakSampler samples the heap in use while work runs, because a single
// reading after the work misses the peak a large batch reaches midway.
type PeakSampler struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	peak uint64
	sys  uint64
}

// StartPeakSampler starts sampling every interval.
func StartPeakSampler(interval time.Duration) *PeakSampler {
	s := &PeakSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				s.sample()
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *PeakSampler) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peak = max(s.peak, ms.HeapInuse)
	s.sys = max(s.sys, ms.Sys)
}

// Stop ends sampling and returns the peak heap in use and the peak memory
// obtained from the OS.
func (s *PeakSampler) Stop() (heapInuse, sys uint64) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak, s.sys
}

// Percentile returns the p-th percentile (0..100) of ds by the nearest-rank
// method, or 0 for no samples.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
