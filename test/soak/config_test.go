package soak

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Broken writers the control runs add, selected with SOAK_BROKEN.
const (
	// brokenMergePatch adds a writer that JSON-merge-patches status.conditions
	// from a snapshot it holds for a while: the lost update statusapply ends.
	brokenMergePatch = "mergepatch"
	// brokenUnguarded drops batcher.Guarded from the plan creators, so two of
	// them that both observe no plan both write one.
	brokenUnguarded = "unguarded"
)

// config is one soak run: how long the writers run under faults, the seed the
// fault schedule and every writer's choices are drawn from, and which broken
// writer (if any) the run adds.
type config struct {
	duration time.Duration
	seed     uint64
	broken   string
	// stopAtFirstViolation ends the fault phase as soon as the checker reports
	// a violation: the controls need one, not a full run.
	stopAtFirstViolation bool
}

// configFromEnv reads SOAK_DURATION (required: the soak is skipped without it),
// SOAK_SEED (default: drawn from the clock, and printed) and SOAK_BROKEN.
func configFromEnv() (config, bool, error) {
	d := os.Getenv("SOAK_DURATION")
	if d == "" {
		return config{}, false, nil
	}
	duration, err := time.ParseDuration(d)
	if err != nil {
		return config{}, true, fmt.Errorf("SOAK_DURATION=%q: %w", d, err)
	}
	if duration < 10*time.Second {
		return config{}, true, fmt.Errorf("SOAK_DURATION=%q: at least 10s, so that every kind of fault has room", d)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("SOAK_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			return config{}, true, fmt.Errorf("SOAK_SEED=%q: %w", s, err)
		}
	}
	broken := os.Getenv("SOAK_BROKEN")
	switch broken {
	case "", brokenMergePatch, brokenUnguarded:
	default:
		return config{}, true, fmt.Errorf("SOAK_BROKEN=%q: want %q or %q", broken, brokenMergePatch, brokenUnguarded)
	}
	return config{duration: duration, seed: seed, broken: broken}, true, nil
}
