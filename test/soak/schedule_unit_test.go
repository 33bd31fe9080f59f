package soak

import (
	"testing"
	"time"
)

// The schedule is a function of the seed and the duration alone: replaying a
// seed replays its faults, and every run has every kind of fault.
func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		seed     uint64
		duration time.Duration
	}{
		{1, 10 * time.Second}, {1, time.Minute}, {42, time.Minute}, {7, 20 * time.Minute},
	} {
		s := newSchedule(tc.seed, tc.duration, objectCount)
		if again := newSchedule(tc.seed, tc.duration, objectCount); again.String() != s.String() {
			t.Errorf("seed %d, %s: the same seed gave another schedule:\n%s\nthen\n%s", tc.seed, tc.duration, s, again)
		}
		counts := s.count()
		for _, k := range faultKinds {
			if counts[k] == 0 && tc.duration >= time.Minute {
				t.Errorf("seed %d, %s: no %s fault:\n%s", tc.seed, tc.duration, k, s)
			}
		}
		var restarts []time.Duration
		for i, f := range s {
			if i > 0 && f.at < s[i-1].at {
				t.Errorf("seed %d: fault %d starts before the one before it", tc.seed, i)
			}
			if f.at+f.length > tc.duration*90/100 && f.kind != faultSecondServer {
				t.Errorf("seed %d, %s: %s outlasts the calm end of the run", tc.seed, tc.duration, f)
			}
			for _, o := range f.objects {
				if o < 0 || o >= objectCount {
					t.Errorf("seed %d: %s names object %d", tc.seed, f, o)
				}
			}
			if f.kind == faultRestart {
				for _, r := range restarts {
					if (f.at - r).Abs() < restartSpacing {
						t.Errorf("seed %d, %s: restarts at %s and %s are too close", tc.seed, tc.duration, r, f.at)
					}
				}
				restarts = append(restarts, f.at)
			}
		}
	}
	if newSchedule(1, time.Minute, objectCount).String() == newSchedule(2, time.Minute, objectCount).String() {
		t.Error("two seeds gave the same schedule")
	}
}
