package schemas

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// DecodeCRDs returns the CustomResourceDefinitions among the documents of a
// multi-document YAML (or JSON) manifest, skipping empty documents and other
// kinds; name labels errors. A List document (kind List, as kubectl get -o
// yaml prints several objects, or a typed list such as
// CustomResourceDefinitionList) is unpacked into its items; an item without
// apiVersion and kind takes them from a typed list.
func DecodeCRDs(name string, data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*apiextensionsv1.CustomResourceDefinition
	for doc := 1; ; doc++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: reading document %d: %w", name, doc, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		crds, err := decodeDocument(raw, "", "")
		if err != nil {
			return nil, fmt.Errorf("%s: decoding document %d: %w", name, doc, err)
		}
		out = append(out, crds...)
	}
}

// decodeDocument returns the CRDs of one document: the document itself, or
// the items of a list. apiVersion and kind are the defaults a typed list
// gives its items, which the API server leaves out of them.
func decodeDocument(raw []byte, apiVersion, kind string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(raw, &head); err != nil {
		return nil, err
	}
	if head.APIVersion == "" && head.Kind == "" {
		head.APIVersion, head.Kind = apiVersion, kind
	}
	if listed, ok := strings.CutSuffix(head.Kind, "List"); ok {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := yaml.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		var itemVersion, itemKind string
		if listed != "" {
			itemVersion, itemKind = head.APIVersion, listed
		}
		var out []*apiextensionsv1.CustomResourceDefinition
		for i, item := range list.Items {
			crds, err := decodeDocument(item, itemVersion, itemKind)
			if err != nil {
				return nil, fmt.Errorf("%s item %d: %w", head.Kind, i, err)
			}
			out = append(out, crds...)
		}
		return out, nil
	}
	if head.Kind != "CustomResourceDefinition" || !strings.HasPrefix(head.APIVersion, apiextensionsv1.GroupName+"/") {
		return nil, nil
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		return nil, err
	}
	crd.APIVersion, crd.Kind = head.APIVersion, head.Kind
	return []*apiextensionsv1.CustomResourceDefinition{crd}, nil
}
