#!/usr/bin/env bash
# Builds kube-apiserver of one Kubernetes version from source through the Go module
# proxy into setup-envtest's per-version directory, for `make test-compat`:
#
#   hack/envtest/install-version.sh 1.36.3
#   hack/envtest/install-version.sh --print-dir 1.36.3
#
# The version whose k8s.io/kubernetes is pinned in kube-apiserver/go.mod beside this
# script is installed by install.sh, exactly as `make envtest` does. Any other version
# gets a build module generated in a scratch directory: it requires
# k8s.io/kubernetes vX.Y.Z and replaces every staging module that k8s.io/kubernetes'
# own go.mod points at a local path with its published v0.Y.Z (k8s.io/kubernetes
# cannot be built as a dependency otherwise), and keeps its godebug defaults.
# etcd is not rebuilt per version: the one etcd of the newest version's directory
# (built by install.sh) is copied in. Skips whatever is already installed.
#
#   ENVTEST_K8S_DIR  parent of the per-version directories
#                    (default: setup-envtest's, $XDG_DATA_HOME/kubebuilder-envtest/k8s)
#   ENVTEST_SCRATCH  where the generated build modules go (default: $TMPDIR/statusapply-envtest)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
print_dir=false
if [[ "${1:-}" == "--print-dir" ]]; then
	print_dir=true
	shift
fi
version=${1:?usage: install-version.sh [--print-dir] X.Y.Z}
version=${version#v}
if [[ ! "$version" =~ ^1\.[0-9]+\.[0-9]+$ ]]; then
	echo "install-version: $version is not a Kubernetes release (want 1.Y.Z)" >&2
	exit 2
fi

data_home=${XDG_DATA_HOME:-$HOME/.local/share}
root=${ENVTEST_K8S_DIR:-$data_home/kubebuilder-envtest/k8s}
platform=$(go env GOOS)-$(go env GOARCH)
dest=$root/$version-$platform
if $print_dir; then
	echo "$dest"
	exit 0
fi

# The version CI uses: install.sh and its committed go.mod/go.sum.
pinned=$(awk '$1 == "k8s.io/kubernetes" { sub(/^v/, "", $2); print $2; exit }' "$here/kube-apiserver/go.mod")
if [[ "$version" == "$pinned" ]]; then
	K8S_VERSION=$version KUBEBUILDER_ASSETS=$dest bash "$here/install.sh"
	exit 0
fi

if [[ -x "$dest/kube-apiserver" && -x "$dest/etcd" ]]; then
	echo "envtest $version: kube-apiserver and etcd already in $dest"
	exit 0
fi
mkdir -p "$dest"

if [[ ! -x "$dest/etcd" ]]; then
	etcd_dir=$root/$pinned-$platform
	K8S_VERSION=$pinned KUBEBUILDER_ASSETS=$etcd_dir bash "$here/install.sh" >/dev/null
	cp "$etcd_dir/etcd" "$dest/etcd.tmp"
	mv "$dest/etcd.tmp" "$dest/etcd"
	echo "envtest $version: etcd copied from $etcd_dir"
fi

if [[ ! -x "$dest/kube-apiserver" ]]; then
	start=$SECONDS
	scratch=${ENVTEST_SCRATCH:-${TMPDIR:-/tmp}/statusapply-envtest}/kube-apiserver-$version
	rm -rf "$scratch"
	mkdir -p "$scratch"
	export GOWORK=off GOFLAGS="${GOFLAGS:-} -mod=mod"

	echo "envtest $version: reading k8s.io/kubernetes v$version's go.mod"
	kmod=$(cd "$scratch" && go mod download -json "k8s.io/kubernetes@v$version" |
		awk -F'"' '$2 == "GoMod" { print $4 }')
	# Every staging module k8s.io/kubernetes replaces with a local path, in either
	# replace form, and its godebug settings.
	mapfile -t staging < <(awk '
		/^replace[ \t]*\(/ { inrep = 1; next }
		inrep && /^\)/     { inrep = 0; next }
		{ line = $0; sub(/^replace[ \t]+/, "", line); n = split(line, f, /[ \t]+/) }
		(inrep || /^replace[ \t]/) && f[1] == "" && f[3] == "=>" && f[4] ~ /^\.\/staging\// { print f[2]; next }
		(inrep || /^replace[ \t]/) && f[2] == "=>" && f[3] ~ /^\.\/staging\// { print f[1] }
	' "$kmod")
	mapfile -t godebug < <(awk '
		/^godebug[ \t]*\(/ { ingd = 1; next }
		ingd && /^\)/      { ingd = 0; next }
		ingd && NF         { print $1 }
		/^godebug[ \t]+[^(]/ { print $2 }
	' "$kmod")
	if ((${#staging[@]} == 0)); then
		echo "install-version: found no staging replace in $kmod" >&2
		exit 1
	fi

	staging_version=v0.${version#1.}
	args=("-require=k8s.io/kubernetes@v$version" "-tool=k8s.io/kubernetes/cmd/kube-apiserver")
	for m in "${staging[@]}"; do
		args+=("-replace=$m=$m@$staging_version")
	done
	for g in "${godebug[@]}"; do
		args+=("-godebug=$g")
	done
	(
		cd "$scratch"
		go mod init statusapply.invalid/envtest/kube-apiserver >/dev/null 2>&1
		go mod edit "${args[@]}"
		echo "envtest $version: ${#staging[@]} staging modules at $staging_version; go mod tidy"
		go mod tidy
		echo "envtest $version: building kube-apiserver from source; a cold build takes minutes"
		go build -trimpath -ldflags='-s -w' -o "$dest/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver
	)
	mv "$dest/kube-apiserver.tmp" "$dest/kube-apiserver"
	cp "$scratch/go.mod" "$dest/kube-apiserver.go.mod"
	echo "envtest $version: kube-apiserver built in $((SECONDS - start))s"
fi
echo "envtest $version: ready in $dest"
