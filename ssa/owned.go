package ssa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"iter"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/statusapply/statusapply/ownership"
)

// What a manager owns is remembered between applies, since reading managedFields
// outweighs the rest of a reconcile that changes nothing. It is sound because:
//
//   - The key is (object uid, manager, subresource): a re-created object is
//     another key, and one manager's state never serves another.
//   - At the state's resourceVersion it is reused as is: an object at one
//     resourceVersion never changes.
//   - At another resourceVersion it is reused only if the manager's entry is
//     byte for byte the state's (taking a field, by Update or force, rewrites it),
//   - and the observed owned values equal the remembered ones: one-second
//     timestamps let a same-named writer or a lost response leave the entry as is,
//   - and the state is complete (its content holds every field of the entry):
//     the value check cannot see a field the content lacks (an omitted zero).
//   - After a successful apply the state is what was applied, at the response's
//     resourceVersion and entry; errors, timeouts and guarded retries drop it.
//   - The cache is bounded: least recently used states go first.

// DefaultOwnedCacheSize is how many (object, manager, subresource) states an
// Applier remembers unless WithOwnedCacheSize says otherwise.
const DefaultOwnedCacheSize = 10000

// ownedKey is one manager's share of one subresource of one object incarnation.
type ownedKey struct {
	uid     types.UID
	manager string
	sub     Subresource
}

// ownedState is what a manager owned at one resourceVersion; rv, entry and
// content (once set) never change. Thousands are kept, so a state holds one
// form and no encoding: content and JSON are derived when needed.
type ownedState struct {
	rv    string
	entry []byte // the fieldsV1 of the manager's Apply entry; nil when it has none

	mu      sync.Mutex
	content map[string]any // owned values without identity; nil until needed when last is set
	last    *acForm        // the form last asked for, or applied; nil until then

	// Its place in the ownedCache's recency list, guarded by the cache's
	// lock; the key's uid is shared with its object's other states.
	key          ownedKey
	newer, older *ownedState
	cached       bool

	// complete: content holds every field of entry, needed for reuse at
	// another resourceVersion. Beside cached, to keep the struct small.
	complete bool
	// beforeFirstApply: the object at rv has a before-first-apply entry,
	// told once per resourceVersion rather than on every attempt.
	beforeFirstApply bool
}

// acForm is the owned content in one apply configuration type, with identity and
// uid. ac is never modified (builds edit copies); only its JSON's sum is kept.
type acForm struct {
	typ reflect.Type
	ac  any
	lay *acLayout // typ's layout, shared with the Applier's layouts
	// sum is jsonSum of ac's JSON, 0 until known.
	sum atomic.Uint64
}

// encodesAs reports whether f.ac encodes to body: an intent that differs only
// where the encoding does not show it (an empty list where the form has none)
// changes nothing. A known sum tells most bodies apart without encoding f.ac.
func (f *acForm) encodesAs(body []byte) bool {
	if sum := f.sum.Load(); sum != 0 && sum != jsonSum(body) {
		return false
	}
	owned, err := json.Marshal(f.ac)
	if err != nil {
		return false
	}
	f.sum.Store(jsonSum(owned))
	return bytes.Equal(body, owned)
}

// jsonSum is the length and CRC-32 of an encoding in one word, never 0.
func jsonSum(b []byte) uint64 {
	return 1<<63 | uint64(len(b))<<32 | uint64(crc32.ChecksumIEEE(b))
}

// ownedContent returns the owned values as content callers must not modify.
func (s *ownedState) ownedContent() (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.content == nil {
		content := map[string]any{}
		if s.last != nil {
			// What its JSON reads back as, without encoding it
			// (FuzzOwnedContent holds the two equal).
			c, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s.last.ac)
			if err != nil {
				return nil, fmt.Errorf("converting the applied configuration: %w", err)
			}
			content = c
		}
		s.content = withoutIdentity(content)
	}
	return s.content, nil
}

func (s *ownedState) lastForm() *acForm {
	s.mu.Lock()
	f := s.last
	s.mu.Unlock()
	return f
}

// form returns the owned content as tb's type, rebuilt only when the type
// changes; nil when tb.FromContent says the type cannot hold it.
func (s *ownedState) form(t Target, tb *TypedBuild, lay *acLayout, uid types.UID) (*acForm, error) {
	typ := tb.Type
	f := s.lastForm()
	if f != nil && f.typ == typ {
		return f, nil
	}
	content, err := s.ownedContent()
	if err != nil {
		return nil, err
	}
	var ac any
	if tb.FromContent != nil {
		var fits bool
		if ac, fits, err = tb.FromContent(withIdentity(t, content)); err != nil || !fits {
			return nil, err
		}
		if reflect.TypeOf(ac) != typ {
			return nil, fmt.Errorf("the typed build's FromContent made a %T, not a %v", ac, typ)
		}
	} else if ac, err = newACFrom(typ, lay, withIdentity(t, content)); err != nil {
		return nil, err
	}
	lay.setUID(ac, uid)
	f = &acForm{typ: typ, ac: ac, lay: lay}
	s.mu.Lock()
	s.last = f
	s.mu.Unlock()
	return f, nil
}

// at returns s at another resourceVersion of its object, where
// beforeFirstApply tells whether before-first-apply holds fields.
func (s *ownedState) at(rv string, beforeFirstApply bool) *ownedState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &ownedState{rv: rv, entry: s.entry, complete: s.complete, content: s.content, last: s.last, beforeFirstApply: beforeFirstApply}
}

// ownedCache remembers ownedStates, least recently used out first; states are
// their own list links, grouped by object to share its uid and metadata.
type ownedCache struct {
	mu      sync.Mutex
	max     int
	n       int // states cached
	objects map[types.UID]*ownedObject
	newest  *ownedState
	oldest  *ownedState
}

// ownedObject holds one object's states and the metadata their forms share.
type ownedObject struct {
	states []*ownedState
	meta   *metav1ac.ObjectMetaApplyConfiguration
}

func newOwnedCache(size int) *ownedCache {
	return &ownedCache{max: size, objects: map[types.UID]*ownedObject{}}
}

func (o *ownedObject) find(k ownedKey) int {
	for i, s := range o.states {
		if s.key.manager == k.manager && s.key.sub == k.sub {
			return i
		}
	}
	return -1
}

func (c *ownedCache) get(k ownedKey) *ownedState {
	if c.max <= 0 || k.uid == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	o := c.objects[k.uid]
	if o == nil {
		return nil
	}
	i := o.find(k)
	if i < 0 {
		return nil
	}
	s := o.states[i]
	if s != c.newest {
		c.unlink(s)
		c.pushNewest(s)
	}
	return s
}

// put remembers s under k, at the front. A state cached under another key is
// copied, since a state has one place in the list.
func (c *ownedCache) put(k ownedKey, s *ownedState) {
	if c.max <= 0 || k.uid == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.cached && s.key != k {
		s = s.at(s.rv, s.beforeFirstApply)
	}
	o, uid := c.object(k.uid)
	k.uid = uid
	if i := o.find(k); i >= 0 {
		c.unlink(o.states[i])
		o.states[i] = s
	} else {
		o.states = append(o.states, s)
		c.n++
	}
	s.key = k
	c.pushNewest(s)
	for c.n > c.max {
		c.remove(c.oldest)
	}
}

// object returns the entry of the object of uid, adding it if there is
// none, and the uid as the cache keeps it. c.mu is held.
func (c *ownedCache) object(uid types.UID) (*ownedObject, types.UID) {
	if o := c.objects[uid]; o != nil {
		if len(o.states) > 0 {
			return o, o.states[0].key.uid
		}
		return o, uid
	}
	o := &ownedObject{}
	c.objects[uid] = o
	return o, uid
}

// shareMeta returns the metadata shared by uid's cached forms if equal to meta,
// else shares meta: forms are never modified, so one copy serves all managers.
func (c *ownedCache) shareMeta(uid types.UID, meta *metav1ac.ObjectMetaApplyConfiguration) *metav1ac.ObjectMetaApplyConfiguration {
	if c.max <= 0 || uid == "" || meta == nil {
		return meta
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The caller puts a state next: the object's entry is not left empty.
	o, _ := c.object(uid)
	if o.meta != nil && equalAC(o.meta, meta) {
		return o.meta
	}
	o.meta = meta
	return meta
}

func (c *ownedCache) drop(k ownedKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.objects[k.uid]; o != nil {
		if i := o.find(k); i >= 0 {
			c.remove(o.states[i])
		}
	}
}

// remove forgets s, which is cached. c.mu is held.
func (c *ownedCache) remove(s *ownedState) {
	o := c.objects[s.key.uid]
	i := o.find(s.key)
	o.states = slices.Delete(o.states, i, i+1) // clears the slot it frees
	if len(o.states) == 0 {
		delete(c.objects, s.key.uid)
	}
	c.n--
	c.unlink(s)
}

// pushNewest puts s, not in the list, at its front. c.mu is held.
func (c *ownedCache) pushNewest(s *ownedState) {
	s.cached = true
	s.older = c.newest
	if c.newest != nil {
		c.newest.newer = s
	} else {
		c.oldest = s
	}
	c.newest = s
}

// unlink takes s out of the list. c.mu is held.
func (c *ownedCache) unlink(s *ownedState) {
	if !s.cached {
		return
	}
	if s.newer != nil {
		s.newer.older = s.older
	} else {
		c.newest = s.older
	}
	if s.older != nil {
		s.older.newer = s.newer
	} else {
		c.oldest = s.newer
	}
	s.newer, s.older, s.cached = nil, nil, false
}

// appliedEntry returns the raw fieldsV1 of manager's Apply entry for sub, if
// any: the entry ownership.Entry.AppliedBy picks, read without decoding its
// fields, from content without converting the other entries.
func appliedEntry(obj client.Object, manager string, sub Subresource) (raw []byte, found bool, err error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return appliedEntryUnstructured(u, manager, sub)
	}
	return appliedEntryIn(obj.GetManagedFields(), manager, sub)
}

func appliedEntryIn(entries []metav1.ManagedFieldsEntry, manager string, sub Subresource) (raw []byte, found bool, err error) {
	for _, mf := range entries {
		if !(ownership.Entry{Manager: mf.Manager, Operation: mf.Operation, Subresource: mf.Subresource}).AppliedBy(manager, string(sub)) {
			continue
		}
		if err := checkFieldsType(manager, mf.FieldsType); err != nil {
			return nil, false, err
		}
		if mf.FieldsV1 == nil {
			return []byte{}, true, nil
		}
		return mf.FieldsV1.GetRawBytes(), true, nil
	}
	return nil, false, nil
}

// entryHeaders yields each managedFields entry of u as content, with its
// manager, operation and subresource as an ownership.Entry, decoding no field set.
func entryHeaders(u *unstructured.Unstructured) iter.Seq2[ownership.Entry, map[string]any] {
	return func(yield func(ownership.Entry, map[string]any) bool) {
		entries, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
		items, _ := entries.([]any)
		for _, item := range items {
			mf, _ := item.(map[string]any)
			m, _ := mf["manager"].(string)
			op, _ := mf["operation"].(string)
			sub, _ := mf["subresource"].(string)
			if !yield(ownership.Entry{Manager: m, Operation: metav1.ManagedFieldsOperationType(op), Subresource: sub}, mf) {
				return
			}
		}
	}
}

func appliedEntryUnstructured(u *unstructured.Unstructured, manager string, sub Subresource) ([]byte, bool, error) {
	for e, mf := range entryHeaders(u) {
		if !e.AppliedBy(manager, string(sub)) {
			continue
		}
		ft, _ := mf["fieldsType"].(string)
		if err := checkFieldsType(manager, ft); err != nil {
			return nil, false, err
		}
		fields, ok := mf["fieldsV1"]
		if !ok || fields == nil {
			return []byte{}, true, nil
		}
		raw, err := json.Marshal(fields)
		if err != nil {
			return nil, false, fmt.Errorf("%w: %w: encoding the managed fields of %q: %w", ErrInvalidInput, ownership.ErrBadManagedFields, manager, err)
		}
		return raw, true, nil
	}
	return nil, false, nil
}

// checkFieldsType refuses an entry whose fields are not FieldsV1, the one
// format the API server writes, as ownership.Inspect does.
func checkFieldsType(manager, fieldsType string) error {
	if fieldsType != "" && fieldsType != "FieldsV1" {
		return fmt.Errorf("%w: %w: managed fields of %q: unsupported fieldsType %q", ErrInvalidInput, ownership.ErrBadManagedFields, manager, fieldsType)
	}
	return nil
}

// decodeFieldSet decodes a managedFields entry's fieldsV1. Its errors wrap
// ErrInvalidInput and ownership.ErrBadManagedFields.
func decodeFieldSet(raw []byte) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if len(raw) == 0 {
		return set, nil
	}
	if err := set.FromJSON(bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("%w: %w: decoding fieldsV1: %w", ErrInvalidInput, ownership.ErrBadManagedFields, err)
	}
	return set, nil
}

// valuesMatch reports whether observed holds every owned value, matching map
// list items by their keys and atomic values whole.
func valuesMatch(s *smdschema.Schema, tr smdschema.TypeRef, owned, observed any) bool {
	atom, ok := s.Resolve(tr)
	if !ok {
		return equalContent(owned, observed)
	}
	switch {
	case atom.Map != nil && atom.Map.ElementRelationship != smdschema.Atomic:
		om, ok := owned.(map[string]any)
		if !ok {
			return equalContent(owned, observed)
		}
		bm, _ := observed.(map[string]any)
		for k, v := range om {
			ft := atom.Map.ElementType
			if f, found := atom.FindField(k); found {
				ft = f.Type
			}
			if !valuesMatch(s, ft, v, bm[k]) {
				return false
			}
		}
		return true
	case atom.List != nil && atom.List.ElementRelationship == smdschema.Associative && len(atom.Keys) > 0:
		ol, ok := owned.([]any)
		if !ok {
			return equalContent(owned, observed)
		}
		bl, _ := observed.([]any)
		for _, item := range ol {
			im, _ := item.(map[string]any)
			match := findByKeys(bl, im, atom.Keys)
			if match == nil || !valuesMatch(s, atom.List.ElementType, item, match) {
				return false
			}
		}
		return true
	case atom.List != nil && atom.List.ElementRelationship == smdschema.Associative:
		// A set of scalars: every owned item is there.
		ol, ok := owned.([]any)
		if !ok {
			return equalContent(owned, observed)
		}
		bl, _ := observed.([]any)
		for _, item := range ol {
			found := false
			for _, b := range bl {
				if equalContent(item, b) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return equalContent(owned, observed)
}

func findByKeys(list []any, item map[string]any, keys []string) map[string]any {
	for _, candidate := range list {
		cm, ok := candidate.(map[string]any)
		if !ok {
			continue
		}
		same := true
		for _, k := range keys {
			if !equalContent(cm[k], item[k]) {
				same = false
				break
			}
		}
		if same {
			return cm
		}
	}
	return nil
}
