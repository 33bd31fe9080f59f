package durations

import (
	"testing"
	"time"
)

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{
		24 * time.Hour: "24h", 90 * time.Minute: "1h30m", 90 * time.Second: "1m30s", 2 * time.Minute: "2m", time.Second: "1s",
	} {
		if got := Short(d); got != want {
			t.Errorf("Short(%s) = %s, want %s", d, got, want)
		}
	}
}
