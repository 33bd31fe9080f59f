// Package durations renders the durations fleet's reports and the CLI print.
package durations

import (
	"strings"
	"time"
)

// Short renders d as time.Duration does, without zero minutes and seconds:
// 24h, 1h30m, 90s.
func Short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
