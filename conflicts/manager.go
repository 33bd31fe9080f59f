package conflicts

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// managerID is the key the API server's field manager gives a managedFields
// entry: the entry as JSON without its fields, fieldsType and time, and
// without apiVersion for Apply entries (an applier keeps one identity across
// versions). Predict keys its managers the same way so that a manager's own
// entry is recognised and every other entry stays distinct.
func managerID(e metav1.ManagedFieldsEntry) (string, error) {
	id := metav1.ManagedFieldsEntry{
		Manager:     e.Manager,
		Operation:   e.Operation,
		APIVersion:  e.APIVersion,
		Subresource: e.Subresource,
	}
	if id.Operation == metav1.ManagedFieldsOperationApply {
		id.APIVersion = ""
	}
	b, err := json.Marshal(&id)
	if err != nil {
		return "", fmt.Errorf("encoding field manager %q: %w", e.Manager, err)
	}
	return string(b), nil
}

// ownerFromID decodes a managerID back into a Conflict's owner fields. An ID
// that is not JSON is taken as a bare manager name, as the server does.
func ownerFromID(id string) Conflict {
	var e metav1.ManagedFieldsEntry
	if err := json.Unmarshal([]byte(id), &e); err != nil {
		return Conflict{Manager: id}
	}
	return Conflict{Manager: e.Manager, Operation: e.Operation, Subresource: e.Subresource, APIVersion: e.APIVersion}
}

// parseOwner parses the server's printed owner at the start of s:
//
//	"name"
//	"name" with subresource "status"
//	"name" using group/version
//	"name" with subresource "status" using group/version at 2006-01-02T15:04:05Z
//
// "using" marks an Update owner; its absence an Apply owner. It returns the
// owner and the unparsed rest of s.
func parseOwner(s string) (Conflict, string, error) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil {
		return Conflict{}, s, fmt.Errorf("expected a quoted manager name at %q", clip(s))
	}
	name, err := strconv.Unquote(q)
	if err != nil {
		return Conflict{}, s, fmt.Errorf("invalid quoted manager name %s", q)
	}
	owner := Conflict{Manager: name, Operation: metav1.ManagedFieldsOperationApply}
	rest := s[len(q):]
	if r, ok := strings.CutPrefix(rest, " with subresource "); ok {
		q, err := strconv.QuotedPrefix(r)
		if err != nil {
			return Conflict{}, s, fmt.Errorf("expected a quoted subresource at %q", clip(r))
		}
		if owner.Subresource, err = strconv.Unquote(q); err != nil {
			return Conflict{}, s, fmt.Errorf("invalid quoted subresource %s", q)
		}
		rest = r[len(q):]
	}
	if r, ok := strings.CutPrefix(rest, " using "); ok {
		owner.Operation = metav1.ManagedFieldsOperationUpdate
		end := strings.IndexAny(r, " :")
		if end < 0 {
			end = len(r)
		}
		owner.APIVersion = r[:end]
		rest = r[end:]
		if r, ok := strings.CutPrefix(rest, " at "); ok {
			const stamp = len("2006-01-02T15:04:05Z")
			if len(r) < stamp {
				return Conflict{}, s, fmt.Errorf("expected a time at %q", clip(r))
			}
			if _, err := time.Parse(time.RFC3339, r[:stamp]); err != nil {
				return Conflict{}, s, fmt.Errorf("invalid time %q", r[:stamp])
			}
			rest = r[stamp:]
		}
	}
	return owner, rest, nil
}

// clip shortens text quoted in error messages.
func clip(s string) string {
	const max = 40
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
