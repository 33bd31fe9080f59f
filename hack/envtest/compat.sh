#!/usr/bin/env bash
# Runs the envtest suites against every supported Kubernetes version (`make test-compat`).
#
# For each version in hack/envtest/versions it installs kube-apiserver (and etcd) into
# setup-envtest's per-version directory (install-version.sh; skipped when already built),
# then runs `go test` on each envtest package (./test/..., ./examples/... and ./cmd/internal/clisuite), one
# package and one version at a time, with KUBEBUILDER_ASSETS pointing at that version.
# It prints a version x suite matrix, rewrites the generated part of
# docs/compatibility.md, and exits non-zero when any cell failed.
#
#   hack/envtest/compat.sh [--build-only]   (--build-only: install the binaries, run nothing)
#
#   COMPAT_VERSIONS  space-separated versions to run instead of hack/envtest/versions
#   COMPAT_PKGS      space-separated packages to run instead of ./test/... ./examples/... ./cmd/internal/clisuite
#                    (with either set, docs/compatibility.md is left alone)
#   COMPAT_LOGS      where per-cell `go test` output goes (default: $TMPDIR/statusapply-compat)
#   COMPAT_TIMEOUT   go test -timeout per package (default 30m)
#   COMPAT_DOC       0 to leave docs/compatibility.md alone
#   COMPAT_REVISION  what the tree is, for docs/compatibility.md (default: git describe)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$repo"

build_only=false
[[ "${1:-}" == "--build-only" ]] && build_only=true
doc=docs/compatibility.md
logs=${COMPAT_LOGS:-${TMPDIR:-/tmp}/statusapply-compat}
timeout=${COMPAT_TIMEOUT:-30m}
write_doc=${COMPAT_DOC:-1}
[[ -n "${COMPAT_VERSIONS:-}" || -n "${COMPAT_PKGS:-}" ]] && write_doc=0

pinned_versions() { sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$here/versions"; }

# The newest supported version is the one CI builds from the committed go.mod.
newest=$(pinned_versions | tail -n 1)
gomod=$(awk '$1 == "k8s.io/kubernetes" { sub(/^v/, "", $2); print $2; exit }' "$here/kube-apiserver/go.mod")
if [[ "$newest" != "$gomod" ]]; then
	echo "compat: hack/envtest/versions ends with $newest but hack/envtest/kube-apiserver/go.mod builds $gomod" >&2
	exit 2
fi
label=$(awk -F'"' '/^const KubernetesVersion/ { print $2 }' internal/apiserver/apiserver.go 2>/dev/null || true)
if [[ -n "$label" && "$label" != "$newest" ]]; then
	echo "compat: warning: internal/apiserver.KubernetesVersion is $label, hack/envtest/versions ends with $newest" >&2
fi

if [[ -n "${COMPAT_VERSIONS:-}" ]]; then
	read -r -a versions <<<"$COMPAT_VERSIONS"
else
	mapfile -t versions < <(pinned_versions)
fi
if [[ -n "${COMPAT_PKGS:-}" ]]; then
	read -r -a pkg_args <<<"$COMPAT_PKGS"
else
	pkg_args=(./test/... ./examples/... ./cmd/internal/clisuite)
fi
# Only packages with tests; helper packages have none.
mapfile -t pkgs < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "${pkg_args[@]}" | sed '/^$/d')
module=$(go list -m)
short() { echo "${1#"$module"/}"; }
# The module version a binary was built from (kube-apiserver built with go build
# reports v0.0.0-master to --version; its build information names the release).
built_from() { go version -m "$1" 2>/dev/null | awk '$1 == "mod" { print $3; exit }'; }

revision=${COMPAT_REVISION:-$(git describe --always --dirty=' with uncommitted changes' 2>/dev/null || echo unknown)}

run_start=$SECONDS
mkdir -p "$logs"

# 1. Binaries, one version after the other.
declare -A built dirs
for v in "${versions[@]}"; do
	dirs[$v]=$(bash "$here/install-version.sh" --print-dir "$v")
	if [[ -x "${dirs[$v]}/kube-apiserver" && -x "${dirs[$v]}/etcd" ]]; then
		built[$v]="already built"
		continue
	fi
	start=$SECONDS
	echo "compat: installing envtest binaries for $v (log: $logs/install-$v.log)"
	if ! bash "$here/install-version.sh" "$v" >"$logs/install-$v.log" 2>&1; then
		tail -n 30 "$logs/install-$v.log" >&2
		echo "compat: building kube-apiserver $v failed; see $logs/install-$v.log" >&2
		exit 1
	fi
	built[$v]="built in $((SECONDS - start))s"
	echo "compat: $v ${built[$v]}"
done
build_secs=$((SECONDS - run_start))
if $build_only; then
	for v in "${versions[@]}"; do echo "compat: $v ${built[$v]} in ${dirs[$v]}"; done
	exit 0
fi

# 2. Compile the test binaries once, so that the first version's cells do not pay for it.
start=$SECONDS
echo "compat: compiling ${#pkgs[@]} test packages"
go test -count=1 -run '^$' "${pkgs[@]}" >"$logs/compile.log" 2>&1 || true
compile_secs=$((SECONDS - start))

# 3. The matrix, one version and one package at a time.
declare -A cell
failed=0
for v in "${versions[@]}"; do
	echo "compat: $v (kube-apiserver from k8s.io/kubernetes $(built_from "${dirs[$v]}/kube-apiserver"), ${dirs[$v]})"
	for p in "${pkgs[@]}"; do
		s=$(short "$p")
		log="$logs/$v/${s//\//_}.log"
		mkdir -p "$logs/$v"
		start=$SECONDS
		if KUBEBUILDER_ASSETS=${dirs[$v]} go test -count=1 -timeout "$timeout" "$p" >"$log" 2>&1; then
			result=pass
		else
			result=FAIL
			failed=1
		fi
		# go test's own time for the package (without building), else the wall time.
		secs=$(awk -v p="$p" '($1 == "ok" || $1 == "FAIL") && $2 == p && $3 ~ /s$/ { sub(/s$/, "", $3); printf "%d", $3 + 0.5 }' "$log")
		secs=${secs:-$((SECONDS - start))}
		cell[$v,$s]="$result ${secs}s"
		printf '  %-22s %s\n' "$s" "${cell[$v,$s]}"
		[[ $result == pass ]] || echo "    log: $log"
	done
done
total_secs=$((SECONDS - run_start))

# 4. The matrix: one row per suite, one column per version.
table() {
	local header="| suite |" rule="| --- |"
	for v in "${versions[@]}"; do header+=" $v |"; rule+=" --- |"; done
	echo "$header"
	echo "$rule"
	for p in "${pkgs[@]}"; do
		local s row
		s=$(short "$p")
		row="| \`$s\` |"
		for v in "${versions[@]}"; do row+=" ${cell[$v,$s]} |"; done
		echo "$row"
	done
}
echo
table
echo
echo "compat: binaries ${build_secs}s, compile ${compile_secs}s, total ${total_secs}s"

if [[ $write_doc != 0 ]]; then
	begin='<!-- BEGIN GENERATED: make test-compat -->'
	end='<!-- END GENERATED -->'
	gen=$(mktemp)
	{
		echo "$begin"
		echo
		echo "Last run: $(date -u +%Y-%m-%d), tree $revision, $(go env GOVERSION), $(nproc) cores,"
		echo "\`go test -count=1\` per package, one package and one version at a time. Each cell is the result and"
		echo "go test's time for the package."
		echo
		table
		echo
		echo "| version | kube-apiserver built from | etcd built from | binaries this run |"
		echo "| --- | --- | --- | --- |"
		for v in "${versions[@]}"; do
			echo "| $v | k8s.io/kubernetes $(built_from "${dirs[$v]}/kube-apiserver") |" \
				"go.etcd.io/etcd/server/v3 $(built_from "${dirs[$v]}/etcd") | ${built[$v]} |"
		done
		echo
		echo "This run took ${total_secs}s: ${build_secs}s for binaries, ${compile_secs}s compiling the test packages,"
		echo "the rest running the suites."
		echo
		echo "$end"
	} >"$gen"
	if [[ -f "$doc" ]] && grep -qF "$begin" "$doc" && grep -qF "$end" "$doc"; then
		awk -v b="$begin" -v e="$end" -v gen="$gen" '
			$0 == b { while ((getline l < gen) > 0) print l; skip = 1; next }
			$0 == e { skip = 0; next }
			!skip
		' "$doc" >"$doc.tmp"
		mv "$doc.tmp" "$doc"
	else
		{
			echo "# Compatibility"
			echo
			cat "$gen"
		} >"$doc"
	fi
	rm -f "$gen"
	echo "compat: wrote $doc"
fi

exit "$failed"
