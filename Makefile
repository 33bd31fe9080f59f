# statusapply: build, test and demo targets. `make help` lists them.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

GO ?= go
TOOLS := $(GO) tool -modfile=hack/tools/go.mod
LINT := $(GO) tool -modfile=hack/golangci-lint/go.mod golangci-lint
GREMLINS := $(GO) tool -modfile=hack/gremlins/go.mod gremlins

# envtest binaries: built from source into setup-envtest's layout, or taken from
# KUBEBUILDER_ASSETS when it is set.
ENVTEST_DIR := $(shell bash hack/envtest/install.sh --print-dir)
export KUBEBUILDER_ASSETS := $(ENVTEST_DIR)

# Packages that need no API server; the envtest suites live under test/ and
# examples/, and the CLI's under cmd/internal/clisuite (the CLI is internal to cmd/).
UNIT_PKGS = $(shell $(GO) list ./... | grep -v -e /test/ -e /examples/ -e /cmd/internal/clisuite)
ENVTEST_PKGS = ./test/... ./examples/... ./cmd/internal/clisuite
TEST_FLAGS ?= -count=1
FUZZTIME ?= 20s
# Packages whose unit tests `make mutate` measures, one at a time.
MUTATE_PKGS ?= ssa batcher shadow conflicts ownership fleet

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*##/ { printf "  %-16s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: envtest
envtest: ## Build kube-apiserver and etcd from source for envtest (once; about 12 minutes cold).
	@bash hack/envtest/install.sh

.PHONY: envtest-compat
envtest-compat: ## Build kube-apiserver for every supported Kubernetes version (hack/envtest/versions).
	@bash hack/envtest/compat.sh --build-only

.PHONY: test-compat
test-compat: ## The envtest suites against every supported Kubernetes version; writes docs/compatibility.md.
	@bash hack/envtest/compat.sh

.PHONY: generate
generate: ## Generate deepcopy, apply configurations (with Extract functions), CRD manifests and docs/api.txt.
	$(TOOLS) controller-gen object applyconfiguration crd paths=./api/... output:crd:dir=./config/crd
	$(GO) run ./hack/apisurface -o docs/api.txt

.PHONY: verify-generate
verify-generate: generate ## Fail when generated files differ from what is committed.
	@if [ -n "$$(git status --porcelain -- api config docs/api.txt)" ]; then \
		git status --porcelain -- api config docs/api.txt; git --no-pager diff -- docs/api.txt; \
		git --no-pager diff --stat -- api config; \
		echo "generated files drifted: run 'make generate' and commit the result"; exit 1; \
	fi

.PHONY: vet
vet: ## go vet every package.
	$(GO) vet ./...

.PHONY: lint
lint: ## gofmt, go vet and golangci-lint (built from the Go module proxy).
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(LINT) run ./...
	cd bench && $(GO) vet ./... && $(GO) tool -modfile=../hack/golangci-lint/go.mod golangci-lint run ./...
	cd analyzers && $(GO) vet ./... && $$(GOWORK=off $(GO) tool -modfile=../hack/golangci-lint/go.mod -n golangci-lint) run ./... # analyzers/go.work: the library from this checkout; -modfile needs GOWORK=off

.PHONY: unit
unit: ## Unit tests (no API server).
	$(GO) test $(TEST_FLAGS) $(UNIT_PKGS)

.PHONY: tmux
tmux: ## Install tmux when missing: the CLI suite drives the binary in a real terminal (skipped without tmux).
	@command -v tmux >/dev/null || (apt-get update && apt-get install -y tmux) || \
		echo "tmux could not be installed: the CLI suite's terminal spec will be skipped"

.PHONY: build
build: ## Build the statusapply and kubectl-statusapply binaries into bin/.
	$(GO) build -o bin/ ./cmd/statusapply ./cmd/kubectl-statusapply

.PHONY: install
install: ## Install the statusapply binary from this checkout into GOBIN (or GOPATH/bin).
	$(GO) install ./cmd/statusapply
	@bin=$$($(GO) env GOBIN); echo "installed statusapply in $${bin:-$$($(GO) env GOPATH)/bin}"

.PHONY: install-plugin
install-plugin: ## Install kubectl-statusapply and its completion helper kubectl_complete-statusapply into GOBIN.
	$(GO) install ./cmd/kubectl-statusapply
	@bin=$$($(GO) env GOBIN); bin=$${bin:-$$($(GO) env GOPATH)/bin}; \
		install -m 0755 cmd/kubectl-statusapply/kubectl_complete-statusapply "$$bin/kubectl_complete-statusapply"; \
		echo "installed kubectl-statusapply and kubectl_complete-statusapply in $$bin"

.PHONY: weight
weight: ## What ssa, batcher, ctrlbatch and schemas add to a controller-runtime controller (at most 40 packages).
	@$(GO) test -count=1 -v -run '^TestDependencyWeight$$' ./hack/depweight | grep -e '^dependency weight' -e FAIL -e '^\s'

.PHONY: test
test: envtest tmux vet weight ## vet, unit tests and the envtest suites (builds the API server first when missing).
	$(GO) test $(TEST_FLAGS) -timeout 40m ./...
	cd bench && $(GO) test $(TEST_FLAGS) ./... # the harness's own tests; the benchmarks need BENCH=1
	cd analyzers && STATUSAPPLY_CUSTOM_GCL=1 $(GO) test $(TEST_FLAGS) -timeout 30m ./... # the go vet analyzers, their own module, and the golangci-lint plugin built in

.PHONY: test-plugin
test-plugin: ## Build golangci-lint with the statusapply plugin (golangci-lint custom) and run it on a testdata package (about 20s warm).
	cd analyzers && STATUSAPPLY_CUSTOM_GCL=1 $(GO) test $(TEST_FLAGS) -timeout 30m -run '^TestCustom' -v ./plugin

.PHONY: vet-analyzers
vet-analyzers: ## Build the statusapply-vet tool into bin/ and run it over the examples (go vet -vettool).
	cd analyzers && $(GO) build -o ../bin/statusapply-vet ./cmd/statusapply-vet
	$(GO) vet -vettool=$(CURDIR)/bin/statusapply-vet ./examples/...

# Fuzz targets as dir:FuzzName, found by hack/fuzz.sh in the test files of every
# module of the repository (`hack/fuzz.sh list`). Go fuzzes one target per run, so
# they run one after the other; FUZZ_TARGETS=ssa:FuzzOwned runs one.
FUZZ_TARGETS ?=
FUZZTIME_CI ?= 4s

.PHONY: fuzz
fuzz: ## Run every fuzz target (docs/design.md#fuzzing) for FUZZTIME each (default 20s).
	@bash hack/fuzz.sh run $(FUZZTIME) $(FUZZ_TARGETS)

.PHONY: fuzz-ci
fuzz-ci: ## Run every fuzz target for FUZZTIME_CI each (default 4s; CI runs it after `make test`).
	@bash hack/fuzz.sh run $(FUZZTIME_CI) $(FUZZ_TARGETS)

SOAK_DURATION ?= 3m
SOAK_SEED ?=
SOAK_BROKEN ?=

.PHONY: soak
soak: envtest ## Randomised writers under injected faults for SOAK_DURATION (default 3m); SOAK_SEED replays a run.
	SOAK_DURATION=$(SOAK_DURATION) SOAK_SEED=$(SOAK_SEED) SOAK_BROKEN=$(SOAK_BROKEN) \
		$(GO) test ./test/soak -run '^TestSoak$$' -count=1 -timeout 0 -v -ginkgo.timeout=24h -ginkgo.v

.PHONY: soak-failover
soak-failover: envtest ## The example manager as leader-elected replicas, killed, paused and replaced, for SOAK_DURATION.
	SOAK_DURATION=$(SOAK_DURATION) SOAK_SEED=$(SOAK_SEED) SOAK_BROKEN=$(SOAK_BROKEN) \
		$(GO) test ./test/failover -run '^TestFailover$$' -count=1 -timeout 0 -v -ginkgo.timeout=24h -ginkgo.v

.PHONY: mutate
mutate: ## Mutation testing (gremlins) of the unit tests of MUTATE_PKGS; not part of CI (see docs/testing.md).
	@log=$$(mktemp); trap 'rm -f "$$log"' EXIT; summary=""; \
	for p in $(MUTATE_PKGS); do \
		echo "== $$p"; start=$$(date +%s); \
		GOFLAGS=-count=1 $(GREMLINS) unleash --workers 2 --timeout-coefficient 10 ./$$p 2>&1 | tee "$$log"; \
		secs=$$(( $$(date +%s) - start )); \
		summary="$$summary$$(sed 's/\x1b\[[0-9;]*m//g' "$$log" | awk -v p=$$p -v s=$$secs ' \
			/^Killed:/ { gsub(",", ""); k=$$2; l=$$4; nc=$$7 } \
			/^Timed out:/ { gsub(",", ""); to=$$3; nv=$$6 } \
			/^Test efficacy:/ { e=$$3 } /^Mutator coverage:/ { c=$$3 } \
			END { printf "%-10s %9s %9s %7s %6s %12s %10s %11s %6ss", p, e, c, k, l, nc, to, nv, s }')"$$'\n'; \
	done; \
	echo; printf "%-10s %9s %9s %7s %6s %12s %10s %11s %7s\n" package efficacy coverage killed lived "not covered" "timed out" "not viable" time; \
	printf '%s' "$$summary"

.PHONY: bench
bench: envtest ## Run the benchmarks against envtest and write docs/benchmarks.md.
	cd bench && BENCH=1 BENCH_COMMAND='make bench' $(GO) test -run '^TestBenchmarks$$' -v -count=1 -timeout 60m .

FUNCCOUNT_FLAGS ?=

.PHONY: funccount
funccount: ## The library functions and files one client-side reconcile enters (docs/benchmarks.md); FUNCCOUNT_FLAGS=-v lists them.
	$(GO) run ./hack/funccount $(FUNCCOUNT_FLAGS)

.PHONY: bench-quick
bench-quick: envtest ## A quick subset of the benchmarks; writes only bench/results/.
	cd bench && BENCH=1 BENCH_QUICK=1 BENCH_COMMAND='make bench-quick' $(GO) test -run '^TestBenchmarks$$' -v -count=1 -timeout 20m .

.PHONY: bench-cli
bench-cli: envtest ## Measure the statusapply binary on 10,000 Widgets (scenario 5) alone and put it into docs/benchmarks.md.
	cd bench && BENCH_CLI=1 BENCH_COMMAND='make bench-cli' $(GO) test -run '^TestCLIBenchmark$$' -v -count=1 -timeout 60m .

.PHONY: bench-audit
bench-audit: envtest ## Measure the fleet audit on 1000 Widgets (wall time, peak heap); writes only bench/results/.
	cd bench && BENCH_AUDIT=1 $(GO) test -run '^TestAuditBenchmark$$' -v -count=1 -timeout 30m .

.PHONY: demo
demo: envtest ## The main job: statusapply against an embedded API server, step by step.
	$(GO) run ./cmd/statusapply demo
