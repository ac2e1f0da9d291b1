# minikubelet — a small, readable kubelet.
#
#   make run     start the local control plane (if needed) and minikubelet against it
#   make test    unit tests (with -race) and e2e tests against a real control plane
#
# Everything is built from the Go module proxy; binaries are cached in
# $${XDG_CACHE_HOME:-~/.cache}/minikubelet, so only the first build is slow (~10 min).

SHELL := /usr/bin/env bash
GIT_COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
GIT_VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.0.0-dev)
LDFLAGS := -X github.com/minikubelet/minikubelet/pkg/version.gitVersion=$(GIT_VERSION) \
           -X github.com/minikubelet/minikubelet/pkg/version.gitCommit=$(GIT_COMMIT)
CLUSTER_DIR ?= _output/cluster
CLUSTER ?= local
# METRICS_SERVER=0: make run (and make debug) start no metrics-server (no kubectl top).
METRICS_SERVER ?= 1

.PHONY: bench all build test test-unit test-fuzz test-e2e test-e2e-labs verify cluster-build cluster-up cluster-down cluster-status metrics-server-up run debug journal lab-check labs-test containerd-install containerd-up containerd-down containerd-status conformance test-conformance kind-up kind-down kubeadm-up kubeadm-down kubeadm-shell kubeadm-restart-kubelet clean

all: build

##@ Build

# build: compile bin/minikubelet with its version stamped in.
build:
	go build -ldflags "$(LDFLAGS)" -o bin/minikubelet ./cmd/minikubelet

##@ Test

# test: everything CI runs (the README's test command). test-conformance needs root, as CI has.
test: test-unit test-fuzz test-e2e-labs test-conformance

# test-unit: unit tests of every package, with the race detector, and the static security checks
# (test/security: no TLS verification switched off anywhere, no key file readable by others).
test-unit:
	go test -race -count=1 ./pkg/... ./internal/... ./fakeruntime/... ./tools/... ./testing/... ./cmd/... ./hack/containerd/... ./hack/bench/... ./test/security/...

# test-fuzz: a short, bounded run of each fuzz target, one target per run as go test -fuzz allows
# (FUZZTIME inputs each); `make test-fuzz FUZZTIME=2000000x` for a longer one. A failing input is
# written to the package's testdata/fuzz/<FuzzName>/: fix the code, keep the file as a seed.
# Budgets are counts (Nx), not durations: with a duration, Go 1.26's fuzz coordinator can fail a
# clean run at its deadline with a bare "context deadline exceeded" and no failing input
# (golang/go#75804, fixed in Go 1.27); seen here in a CI rehearsal.
FUZZTIME ?= 20000x
FUZZ := go test -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 200x
test-fuzz:
	$(FUZZ) -fuzz '^FuzzCreateContainer$$' ./fakeruntime
	$(FUZZ) -fuzz '^FuzzManifestToPod$$' ./pkg/podsource
	$(FUZZ) -fuzz '^FuzzLoadConfigFile$$' ./pkg/options
	$(FUZZ) -fuzz '^FuzzParseCRILog$$' ./pkg/kuberuntime/logs
	$(FUZZ) -fuzz '^FuzzFindTailStart$$' ./pkg/kuberuntime/logs

# test-e2e: end-to-end tests; each package starts its own local control plane and stops it.
# test/e2e/containerd needs containerd (apt, root): it says "skipped: <reason>" where containerd
# cannot start, unless MINIKUBELET_E2E_CONTAINERD=required (as in CI), which makes that a failure.
test-e2e: cluster-build
	hack/containerd/install.sh || [[ "$${MINIKUBELET_E2E_CONTAINERD:-}" != required ]]
	go test -count=1 -timeout 60m ./test/e2e/...

# test-e2e-labs (what make test runs): test-e2e's and labs-test's packages in one go test, three at
# a time, the longest first, while the conformance binaries build in the background, niced
# (hack/test-e2e.sh), so that a cold `make test` stays within an hour.
test-e2e-labs: cluster-build
	hack/test-e2e.sh

# verify: gofmt, go vet, golangci-lint and deadcode (pinned in hack/tools/go.mod), shellcheck,
# vm.yaml and the kind scripts' offline tests, the package map (docs/architecture.md) and the
# 80-line function cap.
verify:
	hack/verify-all.sh

##@ Benchmarks

# bench: minikubelet beside kubemark's hollow node (the real kubelet with a fake runtime) on one
# local control plane: start→Ready, RSS, idle CPU, API requests, 100 pods bound at once; what the
# RSS is made of (hack/bench/floor); then RSS per node of `minikubelet --nodes 50` and
# `--nodes 100`. Prints a table, writes _output/bench/.
# Builds kubemark once (~6 min cold). Needs root (it runs in its own network namespace).
# make bench BENCH_ARGS="--idle 20s --nodes-list 0" for a quick run; go run ./hack/bench -h lists the flags.
BENCH_ARGS ?=
bench: cluster-build
	go run ./hack/bench $(BENCH_ARGS)

##@ Local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler v1.36.3)

# cluster-build: build the control plane binaries into the cache (no-op when cached).
cluster-build:
	hack/cluster/build.sh >/dev/null

# cluster-up: start it on 127.0.0.1 (reports the running one if it is already up).
cluster-up:
	hack/cluster/up.sh up --state-dir $(CLUSTER_DIR)

# cluster-down: stop it by its recorded PIDs and remove its state.
cluster-down:
	hack/cluster/up.sh down --state-dir $(CLUSTER_DIR)

# cluster-status: show each component, and the tail of the log of any that died.
cluster-status:
	hack/cluster/up.sh status --state-dir $(CLUSTER_DIR)

# metrics-server-up: metrics-server v0.8.0 (built once from the Go module proxy) on the running
# control plane, as the v1beta1.metrics.k8s.io APIService, for kubectl top; make run does it by
# default; make cluster-down stops it. It verifies each kubelet's serving certificate against the
# cluster CA: run a node with --rotate-server-certificates and approve its CSR.
metrics-server-up:
	hack/cluster/up.sh metrics-server --state-dir $(CLUSTER_DIR)

##@ Run and debug

# run: the main job: control plane up (if needed) with metrics-server (METRICS_SERVER=0 skips it),
# then minikubelet joins it. Ctrl-C stops minikubelet; make cluster-down stops the rest.
run: build
	CLUSTER=$(CLUSTER) CLUSTER_DIR=$(CLUSTER_DIR) METRICS_SERVER=$(METRICS_SERVER) hack/run.sh

# debug: minikubelet built for Delve (-gcflags=all=-N -l), run like `make run` but under a headless
# dlv on 127.0.0.1:$(DLV_PORT) (with --debug-keepalive), waiting for a debugger; it prints how to attach.
DLV_PORT ?= 2345
debug:
	CLUSTER=$(CLUSTER) CLUSTER_DIR=$(CLUSTER_DIR) METRICS_SERVER=$(METRICS_SERVER) DLV_PORT=$(DLV_PORT) LDFLAGS="$(LDFLAGS)" hack/debug.sh

# journal: follow the running node's journal (make run serves it on 127.0.0.1:10256).
journal: build
	bin/minikubelet journal --follow $(ARGS)

##@ Labs

# lab-check: check a course lab against the cluster and node of `make run`: make lab-check LAB=01
# (lab 00 reads only the repository: make lab-check LAB=00).
# It looks where hack/run.sh puts things (CLUSTER, CLUSTER_DIR, ROOT_DIR, NODE_NAME).
LAB ?=
lab-check:
	@go build -o bin/lab-check ./labs/check
	@CLUSTER=$(CLUSTER) CLUSTER_DIR=$(CLUSTER_DIR) bin/lab-check --lab "$(LAB)"

# labs-test: walk through every lab as a student would, on a fresh control plane and node, and
# check each one before (must fail) and after (must pass); with the checker's unit tests.
labs-test: cluster-build
	go test -count=1 -timeout 20m ./labs/... ./test/labs/

##@ containerd (a real CRI runtime from Debian packages; needs root)

CONTAINERD_DIR ?= _output/containerd

# containerd-install: containerd, runc, busybox-static, CNI plugins from apt (no-op when present).
containerd-install:
	hack/containerd/install.sh

# containerd-up: a private containerd on unix://$(CONTAINERD_DIR)/containerd.sock with our images.
containerd-up: containerd-install
	hack/containerd/up.sh up --state-dir $(CONTAINERD_DIR)

# containerd-down: stop its containers and it (by PID), unmount, remove $(CONTAINERD_DIR).
containerd-down:
	hack/containerd/up.sh down --state-dir $(CONTAINERD_DIR)

# containerd-status: is it running, and what does it hold.
containerd-status:
	hack/containerd/up.sh status --state-dir $(CONTAINERD_DIR)

##@ Conformance (upstream's node conformance specs against minikubelet on containerd; needs root)

# conformance: run k8s.io/kubernetes v1.36.3's e2e specs matching FOCUS (default
# '\[NodeConformance\]': every node conformance spec, sig-node, sig-storage and sig-network) and
# not SKIP (default '\[Slow\]|\[Serial\]|\[Disruptive\]|\[Flaky\]|\[Feature:'; 236 specs remain)
# with PROCS ginkgo processes (16) against minikubelet on containerd with a pod network,
# everything in a network namespace of its own; prints passed/failed/skipped per Describe group
# and writes every spec's result to _output/conformance/results.txt (docs/conformance.md).
# Builds e2e.test, ginkgo and agnhost once (hack/conformance/build.sh; ~5-20 min cold).
#   make conformance FOCUS='Pods should get a host IP'
# SUITE=conformance: upstream's whole [Conformance] suite instead (FOCUS '\[Conformance\]', SKIP
# also '[Alpha]', '[Beta]'), against the kubeadm cluster (KUBEADM_NODES=2 make kubeadm-up, brought
# up and down by the run unless it is up already), results in _output/conformance-kubeadm
# (hack/conformance/kubeadm.sh).
SUITE ?= node
conformance: build
	SUITE=$(SUITE) hack/conformance/run.sh

# test-conformance (part of make test): run exactly the specs listed in hack/conformance/passing.txt
# and fail unless every one of them passes, so that what passes keeps passing. Names specs that
# passed without being listed. Needs root, like make conformance: as another user it says
# "skipped", unless MINIKUBELET_E2E_CONTAINERD=required (as in CI), which makes that a failure.
test-conformance: build
	@if [ "$$(id -u)" != 0 ] && [ "$${MINIKUBELET_E2E_CONTAINERD:-}" != required ]; then \
	  echo "test-conformance: skipped: needs root (a network namespace of its own, containerd)"; \
	else SUITE=node PASSING=hack/conformance/passing.txt hack/conformance/run.sh; fi

##@ kubeadm (a cluster made by `kubeadm init` on minikubelet, in namespaces of its own; needs root)

# kubeadm-up: kubeadm v1.36.3 and the images it names built here (hack/kubeadm/build.sh, images
# built from the Go module proxy and Debian, nothing pulled), then `kubeadm init` with minikubelet
# as the node's kubelet, in a private network, mount and UTS namespace; the host's kubectl reaches
# it with _output/kubeadm/admin.kubeconfig (127.0.0.1:16443). KUBEADM_NODES=2: a second node
# joins (kubeadm join). docs/kubeadm.md.
kubeadm-up: build
	hack/kubeadm/up.sh up

# kubeadm-down: stop all of it by PID; the host is as before (no process, mount or interface left).
kubeadm-down:
	hack/kubeadm/up.sh down

# kubeadm-shell: a shell inside the cluster's namespaces (KUBECONFIG=/etc/kubernetes/admin.conf).
kubeadm-shell:
	hack/kubeadm/up.sh shell

# kubeadm-restart-kubelet: SIGTERM minikubelet on node NODE (1, the control plane; 2 the node that
# joined) and start it again with the same files and flags; its pods are adopted, not restarted.
kubeadm-restart-kubelet:
	hack/kubeadm/up.sh restart-kubelet $(or $(NODE),1)

##@ kind (needs a Docker engine; not in CI)

# kind-up: a kind cluster, a bootstrap token and _output/kind/bootstrap.kubeconfig; then make run CLUSTER=kind.
kind-up:
	hack/kind-up.sh

# kind-down: delete the kind cluster and _output/kind.
kind-down:
	hack/kind-down.sh

clean:
	rm -rf bin _output
