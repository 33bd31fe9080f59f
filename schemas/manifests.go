package schemas

import (
	"bufio"
	"bytes"
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
// kinds; name labels errors.
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
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, crd); err != nil {
			return nil, fmt.Errorf("%s: decoding document %d: %w", name, doc, err)
		}
		if crd.Kind != "CustomResourceDefinition" || !strings.HasPrefix(crd.APIVersion, apiextensionsv1.GroupName+"/") {
			continue
		}
		out = append(out, crd)
	}
}
