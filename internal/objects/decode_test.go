package objects

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kjson "sigs.k8s.io/json"

	"github.com/statusapply/statusapply/api/v1alpha1"
)

// podResponse is a Pod as an API server answers an apply: quantities,
// int-or-string ports, times, managedFields, escapes.
const podResponse = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p1","namespace":"ns","uid":"3f0c","resourceVersion":"12","generation":2,
"creationTimestamp":"2026-11-25T22:38:34Z","labels":{"app":"caf\u00e9 \ud83d\ude00","tier":"a\"b\\c"},"annotations":{"note":"line\nbreak\u0000end"},
"managedFields":[{"manager":"writer-0","operation":"Apply","apiVersion":"v1","time":"2026-11-25T22:38:35Z","fieldsType":"FieldsV1",
"fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{}}}}},"subresource":"status"}]},
"spec":{"containers":[{"name":"c","image":"busybox","ports":[{"containerPort":8080,"protocol":"TCP"}],
"resources":{"limits":{"cpu":"500m","memory":"1Gi"},"requests":{"cpu":"0.25","memory":"256Mi"}},
"livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"initialDelaySeconds":3},
"readinessProbe":{"tcpSocket":{"port":8080}}}],"terminationGracePeriodSeconds":30,"tolerations":[{"key":"k","operator":"Exists","tolerationSeconds":-1}]},
"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"2026-11-25T22:38:35Z"}],
"startTime":"2026-11-25T22:38:34Z"}}`

// observedWidget is the Widget the client-cost benchmarks decode: one an API
// server returned after real applies.
func observedWidget(t testing.TB) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../bench/testdata/observed-widget.json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// sameDecoding reports whether two decodings of one response agree: both
// failed, or both made the same object.
func sameDecoding(a any, aErr error, b any, bErr error) bool {
	if (aErr != nil) != (bErr != nil) {
		return false
	}
	return aErr != nil || reflect.DeepEqual(a, b)
}

// TestResponseDecodesAsEncodingJSON holds decodeObject, which decodes
// typed responses with a faster decoder than encoding/json, to the object
// encoding/json decodes, or to its failure, for responses an API server
// sends, and for what a newer API server adds to them (fields the client's Go
// types do not have). Its control decodes the same responses with a strict
// decoder, which refuses unknown fields, to show that the comparison tells
// a decoder that differs apart.
func TestResponseDecodesAsEncodingJSON(t *testing.T) {
	widget := observedWidget(t)
	strictJSON := jsoniter.Config{CaseSensitive: true, DisallowUnknownFields: true}.Froze()
	newer := strings.Replace(string(widget), `"status": {`, `"status": {"addedLater": {"x": [1, 2.5, "y", null]},`, 1)
	newer = strings.Replace(newer, `"metadata": {`, `"metadata": {"futureField": true,`, 1)
	for _, tc := range []struct {
		name     string
		like     func() client.Object
		response string
		// strictDiffers is set where a decoder refusing unknown fields
		// does not decode what encoding/json decodes.
		strictDiffers bool
	}{
		{name: "a Widget an API server returned", like: func() client.Object { return &v1alpha1.Widget{} }, response: string(widget)},
		{name: "a Widget with fields its Go type lacks", like: func() client.Object { return &v1alpha1.Widget{} }, response: newer, strictDiffers: true},
		{name: "a Pod", like: func() client.Object { return &corev1.Pod{} }, response: podResponse},
		{name: "a Pod with fields its Go type lacks", like: func() client.Object { return &corev1.Pod{} },
			response: strings.Replace(podResponse, `"phase":"Running"`, `"phase":"Running","addedLater":{"a":[1,{}]}`, 1), strictDiffers: true},
		{name: "nulls", like: func() client.Object { return &v1alpha1.Widget{} },
			response: `{"kind":"Widget","metadata":{"name":"w","labels":null,"managedFields":null},"spec":null,"status":{"conditions":null}}`},
		{name: "an empty object", like: func() client.Object { return &v1alpha1.Widget{} }, response: `{}`},
		{name: "a number where a string goes", like: func() client.Object { return &v1alpha1.Widget{} }, response: `{"metadata":{"name":5}}`},
		{name: "a fraction where an integer goes", like: func() client.Object { return &v1alpha1.Widget{} }, response: `{"metadata":{"generation":1.5}}`},
		{name: "an integer too large", like: func() client.Object { return &v1alpha1.Widget{} }, response: `{"metadata":{"generation":99999999999999999999}}`},
		{name: "a bad time", like: func() client.Object { return &v1alpha1.Widget{} }, response: `{"metadata":{"creationTimestamp":"yesterday"}}`},
		{name: "a bad quantity", like: func() client.Object { return &corev1.Pod{} },
			response: `{"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"lots"}}}]}}`},
		{name: "a cut response", like: func() client.Object { return &v1alpha1.Widget{} }, response: `{"metadata":{"name":"w"`},
		{name: "a second value after the object", like: func() client.Object { return &v1alpha1.Widget{} }, response: `{"metadata":{"name":"w"}} {}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.like()
			wantErr := json.Unmarshal([]byte(tc.response), want)
			got := tc.like()
			gotErr := Decode([]byte(tc.response), got)
			if !sameDecoding(got, gotErr, want, wantErr) {
				t.Fatalf("Decode decoded\n%+v (%v)\nencoding/json\n%+v (%v)", got, gotErr, want, wantErr)
			}

			strict := tc.like()
			strictErr := strictJSON.Unmarshal([]byte(tc.response), strict)
			if strictSame := sameDecoding(strict, strictErr, want, wantErr); strictSame == tc.strictDiffers {
				t.Fatalf("control: a strict decoder decodes as encoding/json: %v, want %v (its error: %v)", strictSame, !tc.strictDiffers, strictErr)
			}
		})
	}
}

// TestResponseFieldNamesAreCaseSensitive pins the one place where decodeObject
// and encoding/json part: a key spelled in other case than the field's name,
// which encoding/json takes for the field. Decode does what the
// Kubernetes serializers do (sigs.k8s.io/json): it ignores it. An API server
// writes every key as its schema spells it.
func TestResponseFieldNamesAreCaseSensitive(t *testing.T) {
	response := []byte(`{"metadata":{"name":"w","Namespace":"other"},"Status":{"phase":"x"}}`)
	got, k8s, std := &v1alpha1.Widget{}, &v1alpha1.Widget{}, &v1alpha1.Widget{}
	if err := Decode(response, got); err != nil {
		t.Fatal(err)
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(response, k8s); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(response, std); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, k8s) {
		t.Fatalf("Decode decoded\n%+v\nthe Kubernetes serializer\n%+v", got, k8s)
	}
	if got.Namespace != "" || reflect.DeepEqual(got, std) {
		t.Fatalf("Decode took a key of other case for the field: %+v (encoding/json: %+v)", got, std)
	}
}

// FuzzResponseDecodesAsKubernetes holds Decode to the Kubernetes
// serializers' decoder (sigs.k8s.io/json, which matches field names
// case-sensitively too) on Widget responses: the same Widget, or a failure
// of both. Only JSON is compared: every response Decode gets has been
// read by the client's encoding/json, which refuses anything else, and the
// faster decoder accepts some of what is not (a control character in a
// string). Only valid UTF-8 too: the API server encodes with encoding/json,
// which never writes invalid bytes, and on them the decoders differ only in
// whether they are replaced by U+FFFD.
func FuzzResponseDecodesAsKubernetes(f *testing.F) {
	f.Add(observedWidget(f))
	f.Add([]byte(`{"metadata":{"name":"w","labels":{"a":"caf\u00e9"},"generation":3},"status":{"conditions":[{"type":"A","status":"True","lastTransitionTime":"2026-11-25T22:38:35Z","observedGeneration":2}]}}`))
	f.Add([]byte(`{"spec":{"replicas":2},"status":null,"extra":[1,2.5,"x",{"y":null}]}`))
	f.Fuzz(func(t *testing.T, response []byte) {
		if !json.Valid(response) || !utf8.Valid(response) {
			t.Skip()
		}
		want, got := &v1alpha1.Widget{}, &v1alpha1.Widget{}
		wantErr := kjson.UnmarshalCaseSensitivePreserveInts(response, want)
		gotErr := Decode(response, got)
		if !sameDecoding(got, gotErr, want, wantErr) {
			t.Fatalf("Decode decoded\n%+v (%v)\nthe Kubernetes decoder\n%+v (%v)", got, gotErr, want, wantErr)
		}
	})
}
