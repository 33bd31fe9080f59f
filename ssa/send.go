package ssa

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/statusapply/statusapply/conflicts"
)

// encodedApply is an apply configuration already encoded, so that one encoding
// serves both the no-op comparison and the request.
type encodedApply struct {
	apiVersion, kind, name, namespace string
	body                              []byte
	// response is the API server's answer, kept as it came; a client that
	// resets the configuration first (the fake client does) changes nothing.
	response []byte
}

func (e *encodedApply) IsApplyConfiguration()  {}
func (e *encodedApply) GetName() *string       { return &e.name }
func (e *encodedApply) GetNamespace() *string  { return &e.namespace }
func (e *encodedApply) GetKind() *string       { return &e.kind }
func (e *encodedApply) GetAPIVersion() *string { return &e.apiVersion }

// MarshalJSON returns the body.
func (e *encodedApply) MarshalJSON() ([]byte, error) { return e.body, nil }

// UnmarshalJSON keeps a copy of the API server's response (the client's
// buffer is not ours to keep).
func (e *encodedApply) UnmarshalJSON(data []byte) error {
	e.response = bytes.Clone(data)
	return nil
}

// sendOptions are how one request is sent (see ApplyOptions).
type sendOptions struct{ dryRun, asOwner, raw bool }

// send makes the one request, holding the object's lane only for it, and
// returns the response, decoded as like's type unless opts defer that.
func (a *Applier) send(ctx context.Context, t Target, in *prepared, like client.Object, force bool, x sendOptions) (*answer, error) {
	dryRun := x.dryRun
	apiVersion, kind := t.GVK.ToAPIVersionAndKind()
	encoded := &encodedApply{apiVersion: apiVersion, kind: kind, name: t.Name, namespace: t.Namespace, body: in.body}
	var ac runtime.ApplyConfiguration = encoded
	var viaUnstructured *unstructured.Unstructured
	if !a.cfg.scheme.Recognizes(t.GVK) {
		// The typed client encodes request options through the scheme, which
		// lacks kinds without Go types: the unstructured client sends those.
		viaUnstructured = &unstructured.Unstructured{}
		if err := viaUnstructured.UnmarshalJSON(in.body); err != nil {
			return nil, fmt.Errorf("decoding the intent: %w", err)
		}
		ac = client.ApplyConfigurationFromUnstructured(viaUnstructured)
	}
	owner := client.FieldOwner(t.Manager)
	release, err := a.lanes.acquire(ctx, t.Object())
	if err != nil {
		return nil, err
	}
	if err := ended(ctx); err != nil {
		release()
		return nil, err
	}
	start := time.Now()
	if t.Subresource == StatusSubresource {
		opts := []client.SubResourceApplyOption{owner}
		if force {
			opts = append(opts, client.ForceOwnership)
		}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		err = a.client.Status().Apply(ctx, ac, opts...)
	} else {
		opts := []client.ApplyOption{owner}
		if force {
			opts = append(opts, client.ForceOwnership)
		}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		err = a.client.Apply(ctx, ac, opts...)
	}
	release()
	a.metrics.of([3]string{t.Manager, t.GVK.Group, t.GVK.Kind}).latency.get().Observe(time.Since(start).Seconds())
	if err != nil {
		return nil, outcomeUnknown(ctx, err)
	}
	if viaUnstructured != nil {
		// The client decoded the response into viaUnstructured.
		return answerFromUnstructured(viaUnstructured, like, t)
	}
	return newAnswer(encoded.response, like, t, x.raw)
}

// answerFromUnstructured wraps a response the unstructured client decoded.
func answerFromUnstructured(u *unstructured.Unstructured, like client.Object, t Target) (*answer, error) {
	resp := newObjectLike(like, t)
	if out, ok := resp.(*unstructured.Unstructured); ok {
		out.Object = u.Object
	} else if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, resp); err != nil {
		return nil, fmt.Errorf("decoding the API server's response: %w", err)
	}
	if resp.GetResourceVersion() == "" {
		return nil, errors.New("the API server's response to the apply names no resourceVersion")
	}
	return &answer{obj: resp}, nil
}

// resolve acts on a field-manager conflict by policy: fail with a
// *conflicts.Error, re-send without the contested fields (Yield; nothing when
// the rest changes nothing), or force declared fields (TakeDeclared), recording
// each decision as an event. An AsOwner dry run forces every conflict and
// records nothing, as it decides nothing. res.Sent tells whether it sent.
func (a *Applier) resolve(ctx context.Context, t Target, in *prepared, like client.Object, res *Result, policy conflicts.Policy, conflictErr error, x sendOptions) error {
	ref := t.Object()
	cerr, ok := conflicts.FromError(conflictErr, t.Manager, ref)
	if !ok {
		return conflictErr
	}
	d := policy.Decide(cerr.Conflicts)
	if x.asOwner {
		d = conflicts.Decision{Action: conflicts.ActionForce, Conflicts: cerr.Conflicts}
	} else {
		recordDecision(a.cfg.recorder, res.Object, t.Manager, d)
	}
	var (
		resp *answer
		err  error
	)
	switch d.Action {
	case conflicts.ActionRetryWithout:
		if in.yield == nil {
			return fmt.Errorf("yielding %v: the intent was not built to yield", d.Paths)
		}
		sent, err := in.asUnstructured()
		if err != nil {
			return err
		}
		sendNothing, err := withoutContested(sent.Object, in.yield, d.Paths)
		if err != nil {
			return err
		}
		if sendNothing {
			res.Yielded = d.Conflicts
			a.logger(ctx).Info("yielded contested fields to their owners; nothing else to apply", "target", t.String(), "fields", d.Paths)
			return nil
		}
		body, err := sent.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encoding the apply configuration: %w", err)
		}
		res.Attempts++
		res.Intent = body
		if resp, err = a.send(ctx, t, &prepared{body: body}, like, false, x); err != nil {
			return err
		}
		res.Yielded = d.Conflicts
		a.logger(ctx).Info("yielded contested fields to their owners", "target", t.String(), "fields", d.Paths)
	case conflicts.ActionForce:
		res.Attempts++
		if resp, err = a.send(ctx, t, in, like, true, x); err != nil {
			return err
		}
		res.Taken = d.Conflicts
		if x.asOwner {
			a.logger(ctx).V(1).Info("dry run as the owner of contested fields", "target", t.String(), "conflicts", len(d.Conflicts))
		} else {
			a.logger(ctx).Info("took declared fields from their owners", "target", t.String(), "fields", d.Paths)
		}
	default:
		cerr.Conflicts = d.Conflicts
		return cerr
	}
	res.answered(resp)
	return nil
}
