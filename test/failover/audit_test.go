package failover

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// auditEvent is what the run reads of one audit log line.
type auditEvent struct {
	Verb string `json:"verb"`
	User struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestObject *struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	} `json:"requestObject"`
	RequestReceived metav1.MicroTime `json:"requestReceivedTimestamp"`
	StageTimestamp  metav1.MicroTime `json:"stageTimestamp"`
}

func (e *auditEvent) ok() bool {
	return e.ResponseStatus != nil && e.ResponseStatus.Code >= 200 && e.ResponseStatus.Code < 300
}

// auditFigures are what the audit log says of the replicas' status applies.
type auditFigures struct {
	// applies are the replicas' status applies the API server accepted;
	// refused those it answered with a 409 (a stale resourceVersion, or a
	// field-manager conflict).
	applies, refused int
	// stale are those that completed while another replica held the Lease
	// (its last accepted write was another replica's) and carried no
	// resourceVersion: they may have written over what the leader wrote.
	stale int
	// staleAfterResume are the stale applies of a replica the driver had
	// paused, completed after it continued.
	staleAfterResume int
	// lateGuarded completed while another replica held the Lease too, but
	// carried the resourceVersion they were built from: the API server took
	// them only because nobody had changed the object since, so they wrote
	// what the leader would have computed from it.
	lateGuarded int
	reported    []string
}

// analyseAudit reads the audit log at path for namespace ns: every accepted
// write of Lease lease names the replica leading from then on, and every
// accepted status apply of a Widget by a replica that was not the last to
// write the Lease landed while another replica led: stale unless guarded.
func analyseAudit(path, ns, lease string, pauses []pauseRecord) (auditFigures, error) {
	var fig auditFigures
	f, err := os.Open(path)
	if err != nil {
		return fig, err
	}
	defer func() { _ = f.Close() }()
	var events []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"namespace":"`+ns+`"`) {
			continue
		}
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fig, fmt.Errorf("audit log line: %w", err)
		}
		if e.ObjectRef != nil && e.ObjectRef.Namespace == ns {
			events = append(events, e)
		}
	}
	if err := sc.Err(); err != nil {
		return fig, err
	}
	sort.SliceStable(events, func(i, j int) bool { return events[i].StageTimestamp.Before(&events[j].StageTimestamp) })
	resumed := map[string]time.Time{}
	for _, p := range pauses {
		if t, ok := resumed[p.replica]; !ok || p.resumed.Before(t) {
			resumed[p.replica] = p.resumed
		}
	}
	leader := ""
	for _, e := range events {
		ref, user := e.ObjectRef, e.User.Username
		if !e.ok() {
			if ref.Resource == "widgets" && ref.Subresource == "status" && e.Verb == "patch" && strings.HasPrefix(user, "replica-") &&
				e.ResponseStatus != nil && e.ResponseStatus.Code == http.StatusConflict {
				fig.refused++
			}
			continue
		}
		switch {
		case ref.Resource == "leases" && ref.Name == lease && (e.Verb == "create" || e.Verb == "update"):
			leader = user
		case ref.Resource == "widgets" && ref.Subresource == "status" && e.Verb == "patch" && strings.HasPrefix(user, "replica-"):
			fig.applies++
			if user == leader {
				continue
			}
			if e.RequestObject != nil && e.RequestObject.Metadata.ResourceVersion != "" {
				fig.lateGuarded++
				continue
			}
			fig.stale++
			at := e.StageTimestamp.Time
			note := ""
			if t, ok := resumed[user]; ok && at.After(t) {
				fig.staleAfterResume++
				note = fmt.Sprintf(", %s after it continued", at.Sub(t).Round(time.Millisecond))
			}
			if len(fig.reported) < maxReported {
				fig.reported = append(fig.reported, fmt.Sprintf("%s %s applied the status of %s while %s led (received %s%s)",
					at.Format("15:04:05.000"), user, ref.Name, leader, e.RequestReceived.Format("15:04:05.000"), note))
			}
		}
	}
	return fig, nil
}

// hogCount CPU hogs run beside starved replicas: with the API server, etcd
// and three replicas, a load of about five on two cores.
const hogCount = 2

// startHogs starts n processes that spin at normal priority, and returns a
// func that ends them.
func startHogs(n int) (stop func(), err error) {
	var cmds []*exec.Cmd
	stop = func() {
		for _, c := range cmds {
			_ = c.Process.Signal(syscall.SIGKILL)
			_ = c.Wait()
		}
	}
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			stop()
			return nil, err
		}
		cmds = append(cmds, c)
	}
	return stop, nil
}
