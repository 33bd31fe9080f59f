#!/usr/bin/env bash
# Builds the kube-apiserver and etcd binaries that envtest runs, from source through
# the Go module proxy, into setup-envtest's directory layout. Nothing is downloaded
# but Go modules. Skips the build when both binaries are already installed.
#
#   KUBEBUILDER_ASSETS  install here instead of setup-envtest's default directory
#   K8S_VERSION         the directory's version label (default: the last, newest line
#                       of hack/envtest/versions; the module versions built are pinned
#                       in the go.mod files beside this script, and make test-compat
#                       checks that the two agree)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=${K8S_VERSION:-$(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$here/versions" | tail -n 1)}
data_home=${XDG_DATA_HOME:-$HOME/.local/share}
dest=${KUBEBUILDER_ASSETS:-$data_home/kubebuilder-envtest/k8s/$version-$(go env GOOS)-$(go env GOARCH)}

if [[ "${1:-}" == "--print-dir" ]]; then
	echo "$dest"
	exit 0
fi

if [[ -x "$dest/kube-apiserver" && -x "$dest/etcd" ]]; then
	echo "envtest: kube-apiserver and etcd already in $dest"
	exit 0
fi

mkdir -p "$dest"
build() { # name module-dir package
	local name=$1 dir=$2 pkg=$3 start=$SECONDS
	if [[ -x "$dest/$name" ]]; then
		echo "envtest: $name already in $dest"
		return
	fi
	echo "envtest: building $name from source ($pkg); a cold build takes minutes"
	(cd "$here/$dir" && go build -trimpath -ldflags='-s -w' -o "$dest/$name.tmp" "$pkg")
	mv "$dest/$name.tmp" "$dest/$name"
	echo "envtest: $name built in $((SECONDS - start))s"
}

echo "envtest: installing into $dest (the first build takes about 12 minutes on 2 cores)"
build etcd etcd go.etcd.io/etcd/server/v3
build kube-apiserver kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
echo "envtest: ready in $dest"
