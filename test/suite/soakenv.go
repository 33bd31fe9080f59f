package suite

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"
)

// SoakEnv is what a soak reads from its environment.
type SoakEnv struct {
	Duration time.Duration // SOAK_DURATION
	Seed     uint64        // SOAK_SEED, else drawn from the clock
	Broken   string        // SOAK_BROKEN: "" or one of the suite's controls
}

// SoakFromEnv reads SOAK_DURATION, SOAK_SEED and SOAK_BROKEN. enabled is
// false without SOAK_DURATION (the soak is skipped). A duration under
// minDuration leaves a kind of fault no room, and SOAK_BROKEN must name one
// of brokens; both are errors, as unparsable values are.
func SoakFromEnv(minDuration time.Duration, brokens ...string) (e SoakEnv, enabled bool, err error) {
	d := os.Getenv("SOAK_DURATION")
	if d == "" {
		return SoakEnv{}, false, nil
	}
	if e.Duration, err = time.ParseDuration(d); err != nil {
		return SoakEnv{}, true, fmt.Errorf("SOAK_DURATION=%q: %w", d, err)
	}
	if e.Duration < minDuration {
		return SoakEnv{}, true, fmt.Errorf("SOAK_DURATION=%q: at least %s, so that every kind of fault has room", d, minDuration)
	}
	e.Seed = uint64(time.Now().UnixNano())
	if s := os.Getenv("SOAK_SEED"); s != "" {
		if e.Seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			return SoakEnv{}, true, fmt.Errorf("SOAK_SEED=%q: %w", s, err)
		}
	}
	e.Broken = os.Getenv("SOAK_BROKEN")
	if e.Broken != "" && !slices.Contains(brokens, e.Broken) {
		return SoakEnv{}, true, fmt.Errorf("SOAK_BROKEN=%q: want one of %q", e.Broken, brokens)
	}
	return e, true, nil
}
