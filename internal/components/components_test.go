package components

import "testing"

func TestIsKubernetes(t *testing.T) {
	for _, m := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "cloud-controller-manager", "kubelet"} {
		if !IsKubernetes(m) {
			t.Errorf("%s is not a Kubernetes component", m)
		}
	}
	for _, m := range []string{"", "kubectl", "kube-proxy", "before-first-apply"} {
		if IsKubernetes(m) {
			t.Errorf("%s is a Kubernetes component", m)
		}
	}
}
