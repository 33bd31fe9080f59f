package ssa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
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

// What a field manager owns is remembered between applies, because reading it
// from managedFields (decoding the entry, typing the whole object, extracting
// the fields) costs far more than everything else a reconcile does when
// nothing changed. The rules that make remembering sound:
//
//   - The key is (object uid, manager, subresource): a deleted and re-created
//     object is another key, and one manager's state never serves another.
//   - A state is reused as is while the observed object is at the state's
//     resourceVersion: an object at one resourceVersion never changes.
//   - At another resourceVersion it is reused only when the manager's
//     managedFields entry there is byte for byte the one the state was made
//     from (nobody took or gave it a field: taking a field, by Update or by
//     force, rewrites the entry) and the observed values of the owned fields
//     still equal the remembered ones. The value check stays because the
//     entry's timestamp has one-second resolution: another process using the
//     same manager name, or an apply whose response never arrived, can leave
//     an identical entry with new values. It can only see fields the
//     remembered content holds, so a state extracted from an object that
//     lacked a field of the entry (a typed object leaves out an omitempty
//     zero value) is never reused at another resourceVersion: the field could
//     have come back with a new value.
//   - After a successful apply the state is what was applied, at the
//     response's resourceVersion and entry. Errors, timeouts and guarded
//     retries drop the state, so the next apply reads managedFields again.
//   - The cache is bounded (least recently used states go first).

// DefaultOwnedCacheSize is how many (object, manager, subresource) states an
// Applier remembers unless WithOwnedCacheSize says otherwise.
const DefaultOwnedCacheSize = 10000

// ownedKey identifies what one manager owns of one subresource of one
// incarnation of an object.
type ownedKey struct {
	uid     types.UID
	manager string
	sub     Subresource
}

// ownedState is what a manager owned at one resourceVersion. rv, entry and
// the content (once set) never change; the form is added lazily. An Applier
// keeps thousands of these (see DefaultOwnedCacheSize), so a state holds one
// form, not a set of them (a manager's entries are built in one apply
// configuration type), and no encoding of it: a state made by an apply holds
// only the apply configuration that was sent, and its content and JSON are
// derived from it when something needs them.
type ownedState struct {
	rv    string
	entry []byte // the fieldsV1 of the manager's Apply entry; nil when it has none

	mu      sync.Mutex
	content map[string]any // owned values without identity; nil until needed when last is set
	last    *acForm        // the form last asked for, or applied; nil until then

	// The state's place in the Applier's ownedCache, guarded by the
	// cache's lock: its key (whose uid is its object's, shared), and its
	// neighbours in recency order. A state is its own list element.
	key          ownedKey
	newer, older *ownedState
	cached       bool

	// complete is set when content holds every field of entry, the
	// condition for reusing the state at another resourceVersion. (It sits
	// beside cached: an Applier keeps thousands of states.)
	complete bool
}

// acForm is the owned content as one apply configuration type, with the
// object's identity and uid: what a typed entry starts from and compares
// with. ac is never modified: builds edit copies of it. Its JSON is not
// kept: only a build that changed something compares encodings (see
// encodesAs), and a state holding both would keep the owned content twice.
type acForm struct {
	typ reflect.Type
	ac  any
	lay *acLayout // typ's layout, shared with the Applier's layouts
	// sum is the length and checksum of ac's JSON (see jsonSum); 0 until
	// known. It tells most intents that encode differently without
	// encoding ac again.
	sum atomic.Uint64
}

// encodesAs reports whether f.ac encodes to body: an intent that differs
// from the owned form only where the encoding does not show it (an empty
// list where the form has none) changes nothing. Only builds that changed
// something ask. Once f's sum is known, a body of another length or
// checksum is told apart without encoding f.ac; a body that matches both is
// compared byte for byte.
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

// jsonSum is the length and CRC-32 of an encoding, never 0: a summary of
// the owned form's JSON that costs a word instead of the JSON itself.
func jsonSum(b []byte) uint64 {
	return 1<<63 | uint64(len(b))<<32 | uint64(crc32.ChecksumIEEE(b))
}

// ownedContent returns the owned values as unstructured content; callers must
// not modify it.
func (s *ownedState) ownedContent() (map[string]any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.content == nil {
		content := map[string]any{}
		if s.last != nil {
			// The form's content as the API server got it: what its JSON
			// reads back as, converted without encoding it
			// (FuzzOwnedContent holds the two to the same content).
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

// lastForm returns the form last asked for, or applied; nil when there is
// none yet.
func (s *ownedState) lastForm() *acForm {
	s.mu.Lock()
	f := s.last
	s.mu.Unlock()
	return f
}

// form returns the owned content as typ, building it once (again only when
// another type was asked for since).
func (s *ownedState) form(t Target, typ reflect.Type, lay *acLayout, uid types.UID) (*acForm, error) {
	f := s.lastForm()
	if f != nil && f.typ == typ {
		return f, nil
	}
	content, err := s.ownedContent()
	if err != nil {
		return nil, err
	}
	ac, err := newACFrom(typ, lay, withIdentity(t, content))
	if err != nil {
		return nil, err
	}
	lay.setUID(ac, uid)
	f = &acForm{typ: typ, ac: ac, lay: lay}
	s.mu.Lock()
	s.last = f
	s.mu.Unlock()
	return f, nil
}

// at returns the same state at another resourceVersion.
func (s *ownedState) at(rv string) *ownedState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &ownedState{rv: rv, entry: s.entry, complete: s.complete, content: s.content, last: s.last}
}

// ownedCache remembers ownedStates, least recently used first out. The
// states themselves are the links of its recency list; they are found by
// object, since an object has the states of a few managers: one map entry
// and one copy of the uid serve them all, and the forms they remember share
// the object's identity (see shareMeta).
type ownedCache struct {
	mu      sync.Mutex
	max     int
	n       int // states cached
	objects map[types.UID]*ownedObject
	newest  *ownedState
	oldest  *ownedState
	// equalMeta compares object metadata (see shareMeta), compiled once.
	equalMeta equalFunc
}

// ownedObject is what the cache holds of one object: its states, one per
// (manager, subresource), and the object metadata their forms share.
type ownedObject struct {
	states []*ownedState
	meta   *metav1ac.ObjectMetaApplyConfiguration
}

func newOwnedCache(size int) *ownedCache {
	return &ownedCache{
		max: size, objects: map[types.UID]*ownedObject{},
		equalMeta: compileEqual(reflect.TypeFor[metav1ac.ObjectMetaApplyConfiguration]()),
	}
}

// find returns the index of k's state in o.states, or -1.
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
	c.unlink(s)
	c.pushNewest(s)
	return s
}

// put remembers s as what k's manager owns. s may be in the cache already
// under k (it moves to the front); a state cached under another key is
// remembered as a copy, since a state has one place in the list.
func (c *ownedCache) put(k ownedKey, s *ownedState) {
	if c.max <= 0 || k.uid == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.cached && s.key != k {
		s = s.at(s.rv)
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

// shareMeta returns the object metadata the cached forms of uid's object
// share when it equals meta, else meta, which is then shared from now on.
// A form remembered after an apply puts the shared metadata in place of its
// own: forms are never modified (builds edit copies), so one copy serves
// every manager of the object.
func (c *ownedCache) shareMeta(uid types.UID, meta *metav1ac.ObjectMetaApplyConfiguration) *metav1ac.ObjectMetaApplyConfiguration {
	if c.max <= 0 || uid == "" || meta == nil {
		return meta
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The caller puts a state next: the object's entry is not left empty.
	o, _ := c.object(uid)
	if o.meta != nil && equalPointees(c.equalMeta, o.meta, meta) {
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

func (c *ownedCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
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

// appliedEntry returns the raw fieldsV1 of manager's Apply entry for sub on
// obj, read through the object's accessors (typed objects keep them as
// bytes); found is false when there is none.
func appliedEntry(obj client.Object, manager string, sub Subresource) (raw []byte, found bool, err error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return appliedEntryUnstructured(u, manager, sub)
	}
	return appliedEntryIn(obj.GetManagedFields(), manager, sub)
}

// appliedEntryIn finds manager's Apply entry for sub among entries.
func appliedEntryIn(entries []metav1.ManagedFieldsEntry, manager string, sub Subresource) (raw []byte, found bool, err error) {
	for _, mf := range entries {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.Subresource != string(sub) {
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

func appliedEntryUnstructured(u *unstructured.Unstructured, manager string, sub Subresource) ([]byte, bool, error) {
	entries, _, _ := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields")
	items, _ := entries.([]any)
	for _, item := range items {
		mf, _ := item.(map[string]any)
		s, _ := mf["subresource"].(string)
		if mf["manager"] != manager || mf["operation"] != string(metav1.ManagedFieldsOperationApply) || s != string(sub) {
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

// valuesMatch reports whether observed holds every owned value, walking both
// with the kind's schema: struct fields and map entries by name, items of map
// lists by their keys, atomic values whole.
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

// findByKeys returns the item of list whose key fields equal item's.
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
