// Package unstructured is a stub of k8s.io/apimachinery/pkg/apis/meta/v1/unstructured.
package unstructured

type Unstructured struct{ Object map[string]interface{} }

func (u *Unstructured) GetName() string { return "" }

func SetNestedField(obj map[string]interface{}, value interface{}, fields ...string) error {
	obj[fields[0]] = value
	return nil
}

func (u *Unstructured) DeepCopy() *Unstructured { c := *u; return &c }
