#!/usr/bin/env bash
# Builds a golangci-lint with the module plugins of .custom-gcl.yml
# (`golangci-lint custom`) without reaching GitHub: golangci-lint custom
# clones golangci-lint's repository at the file's version, so the clone is
# served from that version's source in the Go module cache instead (fetched
# through GOPROXY when missing), by a local git repository and git's
# url.<base>.insteadOf. Modules the build needs come from the module cache or
# GOPROXY, as for any build.
#
# Run it in the directory holding .custom-gcl.yml:
#   bash path/to/custom-gcl.sh            # builds the file's destination/name
# GOLANGCI_LINT names a golangci-lint binary to run `custom` with; without it
# the file's version is built with go install first. The steps are those of
# the analyzers' README.md ("golangci-lint, offline"); make test-plugin runs
# this script.
set -euo pipefail

cfg=.custom-gcl.yml
[[ -f $cfg ]] || { echo "no $cfg in $PWD" >&2; exit 2; }
version=$(sed -n 's/^version:[[:space:]]*//p' "$cfg" | tr -d "\"'" | head -n1)
[[ -n $version ]] || { echo "$cfg: no version" >&2; exit 2; }
module=github.com/golangci/golangci-lint/v2

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# 1. golangci-lint's source at that version, from the module cache.
src=$(cd "$tmp" && GOWORK=off go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[[ -d $src ]] || { echo "go mod download $module@$version: no source directory" >&2; exit 1; }

# 2. A git repository of that source, tagged as the version.
repo=$tmp/golangci-lint.git
cp -R "$src/." "$repo"
chmod -R u+w "$repo"
git=(git -C "$repo" -c user.name=custom-gcl -c user.email=custom-gcl@localhost -c commit.gpgsign=false -c tag.gpgsign=false)
"${git[@]}" init -q
"${git[@]}" add -A
"${git[@]}" commit -q --no-verify -m "$version"
"${git[@]}" tag "$version"

# 3. The golangci-lint that runs `custom`.
gcl=${GOLANGCI_LINT:-}
if [[ -z $gcl ]]; then
	(cd "$tmp" && GOWORK=off GOBIN="$tmp/bin" go install "$module/cmd/golangci-lint@$version")
	gcl=$tmp/bin/golangci-lint
fi

# 4. golangci-lint custom, its clone of GitHub answered by the repository.
# GOFLAGS=-e: the go mod tidy it runs also loads the tests of the plugins'
# dependencies, one of which meets an ambiguous google.golang.org/genproto
# import; the build needs none of them.
GIT_CONFIG_COUNT=1 \
GIT_CONFIG_KEY_0="url.file://$repo.insteadOf" \
GIT_CONFIG_VALUE_0=https://github.com/golangci/golangci-lint.git \
GOFLAGS="${GOFLAGS:-} -e" \
	"$gcl" custom -v
