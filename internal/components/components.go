// Package components knows the field managers of Kubernetes itself, which
// fleet's reports and migration plans, and the CLI beside them, leave alone.
package components

// IsKubernetes reports whether manager is a field manager of Kubernetes
// itself (kube-apiserver, kube-controller-manager, kube-scheduler,
// cloud-controller-manager, kubelet). They write status with Update on the
// status subresource, but they are not legacy writers of anyone's
// controller: nothing will ever apply in their place.
func IsKubernetes(manager string) bool {
	switch manager {
	case "kube-apiserver", "kube-controller-manager", "kube-scheduler", "cloud-controller-manager", "kubelet":
		return true
	}
	return false
}
