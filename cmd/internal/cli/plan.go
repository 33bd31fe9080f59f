package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/statusapply/statusapply/fleet"
)

// planFlags are the migrate flags that make up an fleet.Plan.
type planFlags struct {
	from          []string
	conditions    []string
	releaseShared bool
	// staleVersions and dropUntranslatable are Plan.RewriteStaleVersions
	// and Plan.DropUntranslatable.
	staleVersions      bool
	dropUntranslatable bool
}

// plan builds and validates the fleet.Plan the flags describe.
func (f planFlags) plan() (fleet.Plan, error) {
	managers, err := parseAssignments("--from", f.from)
	if err != nil {
		return fleet.Plan{}, err
	}
	conditions, err := parseAssignments("--condition", f.conditions)
	if err != nil {
		return fleet.Plan{}, err
	}
	if len(managers) == 0 && len(conditions) == 0 && !f.releaseShared && !f.staleVersions {
		return fleet.Plan{}, errors.New(
			"nothing to migrate: give --from LEGACY=MANAGER, --condition TYPE=MANAGER, --release-shared or --stale-versions")
	}
	if f.dropUntranslatable && !f.staleVersions {
		return fleet.Plan{}, errors.New("--drop-untranslatable: only with --stale-versions")
	}
	p := fleet.Plan{Managers: managers, Conditions: conditions, ReleaseShared: f.releaseShared,
		RewriteStaleVersions: f.staleVersions, DropUntranslatable: f.dropUntranslatable}
	if err := p.Validate(); err != nil {
		return fleet.Plan{}, err
	}
	return p, nil
}

// parseAssignments reads repeated KEY=VALUE values of flag into a map. A key
// given twice with the same value is accepted; with different values it is
// an error, since one legacy manager or condition type cannot go to two apply
// managers. No values yield a nil map.
func parseAssignments(flag string, values []string) (map[string]string, error) {
	var out map[string]string
	for _, v := range values {
		key, value, ok := strings.Cut(v, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" || value == "" {
			return nil, fmt.Errorf("%s %q: want KEY=MANAGER, such as legacy-controller=readiness", flag, v)
		}
		if prev, dup := out[key]; dup && prev != value {
			return nil, fmt.Errorf("%s: %q is given to both %q and %q", flag, key, prev, value)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[key] = value
	}
	return out, nil
}
