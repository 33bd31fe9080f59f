package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/moby/term"
	"k8s.io/apimachinery/pkg/util/duration"
)

// progressPrinter reports progress on stderr: on a terminal, one line
// redrawn in place (carriage return, then erase the line); otherwise one
// line per report, for logs.
type progressPrinter struct {
	w io.Writer
	// terminal says w is a terminal: reports redraw one line.
	terminal bool
	// width is the terminal's width in columns, 0 when unknown; a redrawn
	// line is cut to fit, since a line that wraps cannot be erased whole.
	width int
	// drawn says a line is on the terminal and must be erased.
	drawn bool
}

// newProgressPrinter returns a printer for w.
func newProgressPrinter(w io.Writer) *progressPrinter {
	p := &progressPrinter{w: w}
	fd, isTerminal := term.GetFdInfo(w)
	if !isTerminal {
		return p
	}
	p.terminal = true
	if ws, err := term.GetWinsize(fd); err == nil {
		p.width = int(ws.Width)
	}
	return p
}

// eraseLine returns the cursor to the start of the line and erases it.
const eraseLine = "\r\x1b[2K"

// print reports line.
func (p *progressPrinter) print(line string) {
	if !p.terminal {
		fmt.Fprintln(p.w, line)
		return
	}
	if r := []rune(line); p.width > 1 && len(r) >= p.width {
		line = string(r[:p.width-1])
	}
	fmt.Fprint(p.w, eraseLine+line)
	p.drawn = true
}

// clear erases the redrawn line, so that what follows starts on a clean
// line.
func (p *progressPrinter) clear() {
	if p.drawn {
		fmt.Fprint(p.w, eraseLine)
		p.drawn = false
	}
}

// rateClock estimates, from the objects done since it started, how long the
// rest of a run takes.
type rateClock struct {
	start time.Time
	now   func() time.Time
}

// newRateClock starts a clock reading now.
func newRateClock(now func() time.Time) rateClock {
	return rateClock{start: now(), now: now}
}

// left returns " (R/s, T left)" after done of total objects, or "" in the
// first second (too early to tell) and at the end.
func (r rateClock) left(done, total int) string {
	elapsed := r.now().Sub(r.start)
	if elapsed < time.Second || done <= 0 || done >= total {
		return ""
	}
	rate := float64(done) / elapsed.Seconds()
	remaining := time.Duration(float64(total-done) / rate * float64(time.Second))
	return fmt.Sprintf(" (%.0f/s, %s left)", rate, duration.HumanDuration(remaining))
}
