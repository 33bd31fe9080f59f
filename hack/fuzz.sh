#!/usr/bin/env bash
# Native Go fuzz targets, found in the source rather than listed by hand, so a
# target added or moved to another package is fuzzed without editing anything.
#
#   hack/fuzz.sh list                 every target, one per line, as dir:FuzzName
#   hack/fuzz.sh run TIME [TARGET...] fuzz each target (default: all) for TIME
#   hack/fuzz.sh keep N [TARGET...]   copy up to N inputs of each target's cached
#                                     corpus into its testdata/fuzz/FuzzName/
#
# dir is the package's directory relative to the repository root; a package in
# another module of the repository (bench/, analyzers/) is fuzzed from that
# module's root. Go fuzzes one target per run, so targets run one after another.
#
# FUZZMINIMIZETIME bounds the minimizing of each input that reaches new code or
# fails (default 200x, i.e. 200 runs; Go's default is 60s): some targets, such
# as ownership's FuzzInspect, otherwise spend a short run minimizing their first
# new input and never fuzz. Set it to 60s to have a failing input minimized.
# FUZZFLAGS adds flags to every run of a test binary (e.g. FUZZFLAGS=-test.parallel=4).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

GO=${GO:-go}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-200x}

# A fuzz target is a top-level func FuzzXxx(f *testing.F) in a _test.go file.
# testdata, vendor and directories starting with . or _ hold no packages the go
# command builds, so their files are not searched.
list() {
	grep -rHoE --include='*_test.go' \
		--exclude-dir=testdata --exclude-dir=vendor --exclude-dir='.?*' --exclude-dir='_*' \
		'^func Fuzz[A-Z0-9_][A-Za-z0-9_]*\([A-Za-z0-9_]+ \*testing\.F\)' . |
		sed -E 's|^\./(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]*)\(.*|\1:\2|; s|^\./[^/]*:func (Fuzz[A-Za-z0-9_]*)\(.*|.:\1|' |
		LC_ALL=C sort -u
}

# The root of the module that holds dir: the nearest directory with a go.mod.
module_root() {
	local d=$1
	while [ "$d" != "." ] && [ ! -f "$d/go.mod" ]; do
		d=$(dirname "$d")
	done
	echo "$d"
}

# fuzz_once runs one target. A run that fails with only "context deadline
# exceeded" and leaves no failing input behind was stopped by the fuzzing time
# ending while a worker was busy (minimizing a new input, say), not by the
# target: it is run once more, and a second such ending fails.
fuzz_once() {
	local dir=$1 name=$2 bin=$3 time=$4 cachedir=$5 out before attempt
	for attempt in 1 2; do
		before=$(ls "$dir/testdata/fuzz/$name" 2>/dev/null | wc -l)
		# shellcheck disable=SC2086 # FUZZFLAGS is a list of flags.
		if out=$(cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^$name\$" -test.fuzztime="$time" \
			-test.fuzzminimizetime="$FUZZMINIMIZETIME" -test.fuzzcachedir="$cachedir" \
			-test.timeout=10m -test.paniconexit0 ${FUZZFLAGS:-} 2>&1); then
			echo "$out"
			return 0
		fi
		echo "$out"
		if [ "$attempt" = 1 ] && grep -q 'context deadline exceeded' <<<"$out" &&
			[ "$(ls "$dir/testdata/fuzz/$name" 2>/dev/null | wc -l)" = "$before" ]; then
			echo "== the run ended with the fuzzing time and no failing input; once more"
			continue
		fi
		return 1
	done
	return 1
}

# run builds each package's test binary once, with the fuzzing
# instrumentation, and runs it for each of the package's targets: that links
# once per package instead of once per target. The binary runs in the package's
# directory and with the cache directory `go test -fuzz` gives it, so failing
# inputs land in testdata/fuzz/ and the corpus grows where `go test` keeps it.
run() {
	local time=$1
	shift
	local targets=("$@")
	if [ ${#targets[@]} -eq 0 ]; then
		mapfile -t targets < <(list)
	fi
	if [ ${#targets[@]} -eq 0 ]; then
		echo "no fuzz targets found" >&2
		exit 1
	fi
	local start t dir name mod rel path bin cache built="" failed=()
	start=$(date +%s)
	cache=$($GO env GOCACHE)/fuzz
	bindir=$(mktemp -d)
	trap 'rm -rf "$bindir"' EXIT
	for t in "${targets[@]}"; do
		dir=${t%%:*}
		name=${t#*:}
		bin=$bindir/${dir//\//_}.test
		if [ "$dir" != "$built" ]; then
			mod=$(module_root "$dir")
			rel=${dir#"$mod"}
			rel=./${rel#/}
			echo "== building the fuzzing test binary of $dir"
			if ! path=$(cd "$mod" && $GO list "$rel") || ! (cd "$mod" && $GO test -c -fuzz=. -o "$bin" "$rel"); then
				failed+=("$t")
				continue
			fi
			built=$dir
		fi
		echo "== fuzzing $name in $dir for $time"
		if ! fuzz_once "$dir" "$name" "$bin" "$time" "$cache/$path"; then
			failed+=("$t")
			echo "FAIL: $name in $dir; the failing input is in $dir/testdata/fuzz/$name/" >&2
		fi
	done
	echo "fuzzed ${#targets[@]} targets in $(($(date +%s) - start))s"
	if [ ${#failed[@]} -gt 0 ]; then
		echo "failed: ${failed[*]}" >&2
		exit 1
	fi
}

# The inputs that reached new code while fuzzing stay in the build cache
# ($GOCACHE/fuzz/IMPORTPATH/FuzzName); `go test` replays only testdata/fuzz. keep
# copies up to N of them, of at most 4 KB, picked by file name (a hash, so an
# arbitrary sample) and skipping names already kept, so that later runs of the
# unit tests replay them. Check that the package's tests pass before committing.
keep() {
	local n=$1
	shift
	local targets=("$@")
	if [ ${#targets[@]} -eq 0 ]; then
		mapfile -t targets < <(list)
	fi
	local cache t dir name mod rel path src dst kept
	cache=$($GO env GOCACHE)/fuzz
	for t in "${targets[@]}"; do
		dir=${t%%:*}
		name=${t#*:}
		mod=$(module_root "$dir")
		rel=${dir#"$mod"}
		rel=./${rel#/}
		path=$(cd "$mod" && $GO list "$rel")
		src=$cache/$path/$name
		dst=$dir/testdata/fuzz/$name
		kept=0
		if [ -d "$src" ]; then
			mkdir -p "$dst"
			while IFS= read -r f; do
				[ "$kept" -lt "$n" ] || break
				[ -e "$dst/$(basename "$f")" ] && continue
				cp "$f" "$dst/"
				kept=$((kept + 1))
			done < <(find "$src" -type f -size -4097c | LC_ALL=C sort)
		fi
		echo "$t: kept $kept of $(find "$src" -type f 2>/dev/null | wc -l) cached inputs in $dst"
	done
}

case ${1:-} in
list) list ;;
keep)
	[ $# -ge 2 ] || { echo "usage: $0 keep N [dir:FuzzName...]" >&2; exit 2; }
	shift
	keep "$@"
	;;
run)
	[ $# -ge 2 ] || { echo "usage: $0 run TIME [dir:FuzzName...]" >&2; exit 2; }
	shift
	run "$@"
	;;
*)
	echo "usage: $0 list | run TIME [dir:FuzzName...] | keep N [dir:FuzzName...]" >&2
	exit 2
	;;
esac
