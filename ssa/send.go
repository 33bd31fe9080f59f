package ssa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/statusapply/statusapply/conflicts"
)

// encodedApply is an apply configuration already encoded: the body is sent
// as it is, and the response is decoded straight into an object of the
// observed object's type. Encoding once serves both the no-op comparison and
// the request; decoding into a typed object keeps what the batch holds after
// a Flush small.
type encodedApply struct {
	apiVersion, kind, name, namespace string
	body                              []byte
	into                              client.Object
	// response keeps the response when the client reset this configuration
	// before decoding into it (controller-runtime's fake client does), which
	// loses into; decodeInto then decodes it.
	response []byte
}

func (e *encodedApply) IsApplyConfiguration()  {}
func (e *encodedApply) GetName() *string       { return &e.name }
func (e *encodedApply) GetNamespace() *string  { return &e.namespace }
func (e *encodedApply) GetKind() *string       { return &e.kind }
func (e *encodedApply) GetAPIVersion() *string { return &e.apiVersion }

// MarshalJSON returns the body.
func (e *encodedApply) MarshalJSON() ([]byte, error) { return e.body, nil }

// UnmarshalJSON decodes the API server's response into the target object.
func (e *encodedApply) UnmarshalJSON(data []byte) error {
	if e.into == nil {
		e.response = data
		return nil
	}
	return decodeObject(data, e.into)
}

// decodeInto decodes a response that UnmarshalJSON had to keep.
func (e *encodedApply) decodeInto(obj client.Object) error {
	if e.response == nil {
		return nil
	}
	return decodeObject(e.response, obj)
}

func decodeObject(data []byte, obj client.Object) error {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.UnmarshalJSON(data)
	}
	if err := json.Unmarshal(data, obj); err != nil {
		return fmt.Errorf("decoding the API server's response: %w", err)
	}
	return nil
}

// send makes the one request, holding the object's lane only for it, and
// returns the API server's response as an object of obs's type.
func (a *Applier) send(ctx context.Context, t Target, in *prepared, obs client.Object, force, dryRun bool) (client.Object, error) {
	release, err := a.lanes.acquire(ctx, t.Object())
	if err != nil {
		return nil, err
	}
	defer release()
	resp := newObjectLike(obs, t)
	apiVersion, kind := t.GVK.ToAPIVersionAndKind()
	encoded := &encodedApply{apiVersion: apiVersion, kind: kind, name: t.Name, namespace: t.Namespace, body: in.body, into: resp}
	var ac runtime.ApplyConfiguration = encoded
	var viaUnstructured *unstructured.Unstructured
	if !a.cfg.scheme.Recognizes(t.GVK) {
		// A kind without Go types (a CRD the writer does not own): the typed
		// client encodes its request options through the scheme, which does
		// not know the group version, so the unstructured client sends it.
		viaUnstructured = &unstructured.Unstructured{}
		if err := viaUnstructured.UnmarshalJSON(in.body); err != nil {
			return nil, fmt.Errorf("decoding the intent: %w", err)
		}
		ac = client.ApplyConfigurationFromUnstructured(viaUnstructured)
	}
	owner := client.FieldOwner(t.Manager)
	start := time.Now()
	defer func() { a.metrics.latency.With(a.metrics.labels(t)).Observe(time.Since(start).Seconds()) }()
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
	if err != nil {
		return nil, err
	}
	if viaUnstructured != nil {
		// The client decoded the response into viaUnstructured.
		if u, ok := resp.(*unstructured.Unstructured); ok {
			u.Object = viaUnstructured.Object
		} else if err := runtime.DefaultUnstructuredConverter.FromUnstructured(viaUnstructured.Object, resp); err != nil {
			return nil, fmt.Errorf("decoding the API server's response: %w", err)
		}
	} else if err := encoded.decodeInto(resp); err != nil {
		return nil, err
	}
	if resp.GetResourceVersion() == "" {
		return nil, errors.New("the API server's response to the apply names no resourceVersion")
	}
	return resp, nil
}

// resolve acts on a field-manager conflict by policy: it fails with a
// *conflicts.Error, or re-sends the intent without the contested fields
// (Yield), or forces it when every contested field is declared
// (TakeDeclared). Each decision is recorded as an event when a recorder is
// set. An AsOwner dry run forces every conflict and records no event: it
// decides nothing.
func (a *Applier) resolve(ctx context.Context, t Target, in *prepared, obs client.Object, res *Result, policy conflicts.Policy, conflictErr error, opts ApplyOptions) error {
	ref := t.Object()
	cerr, ok := conflicts.FromError(conflictErr, t.Manager, ref)
	if !ok {
		return conflictErr
	}
	dryRun := opts.DryRun
	d := policy.Decide(cerr.Conflicts)
	if opts.AsOwner {
		d = conflicts.Decision{Action: conflicts.ActionForce, Conflicts: cerr.Conflicts}
	} else {
		conflicts.Record(a.cfg.recorder, res.Object, t.Manager, d)
	}
	var (
		resp client.Object
		err  error
	)
	switch d.Action {
	case conflicts.ActionRetryWithout:
		sent, err := in.asUnstructured()
		if err != nil {
			return err
		}
		if _, err := conflicts.RemoveFields(sent.Object, d.Paths...); err != nil {
			return fmt.Errorf("yielding %v: %w", d.Paths, err)
		}
		body, err := sent.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encoding the apply configuration: %w", err)
		}
		res.Attempts++
		res.Intent = body
		if resp, err = a.send(ctx, t, &prepared{body: body}, obs, false, dryRun); err != nil {
			return err
		}
		res.Yielded = d.Conflicts
		log.FromContext(ctx).Info("yielded contested fields to their owners", "target", t.String(), "fields", d.Paths)
	case conflicts.ActionForce:
		res.Attempts++
		if resp, err = a.send(ctx, t, in, obs, true, dryRun); err != nil {
			return err
		}
		res.Taken = d.Conflicts
		if opts.AsOwner {
			log.FromContext(ctx).V(1).Info("dry run as the owner of contested fields", "target", t.String(), "conflicts", len(d.Conflicts))
		} else {
			log.FromContext(ctx).Info("took declared fields from their owners", "target", t.String(), "fields", d.Paths)
		}
	default:
		cerr.Conflicts = d.Conflicts
		return cerr
	}
	res.Object, res.Sent = resp, true
	return nil
}
