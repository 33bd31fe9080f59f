package soak

import (
	"github.com/statusapply/statusapply/test/suite"
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
	e, enabled, err := suite.SoakFromEnv(10*time.Second, brokenMergePatch, brokenUnguarded)
	return config{duration: e.Duration, seed: e.Seed, broken: e.Broken}, enabled, err
}
