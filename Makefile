# oxflow — two commands do all the set-up on a fresh machine:
#   make demo   build, install what is needed, run the main job on an embedded default
#   make test   every test (Rust unit/property/vector tests, clippy, fmt, Python cross-checks)
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)
VENV := .venv
PY := $(VENV)/bin/python
CARGO ?= cargo

.PHONY: all setup build test test-rust test-python lint fmt demo bench bench-packet fuzz vectors clean bench-compare

all: build

setup:
	@bash scripts/setup.sh

build: setup
	$(CARGO) build --workspace --release

lint: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

test-rust: setup
	$(CARGO) test --workspace

test-python: setup
	$(CARGO) build -q -p ofp --example emit_vectors
	$(CARGO) build -q --release -p oxflow
	$(PY) -m pytest -q tests/python

test: lint test-rust test-python
	@echo "make test: all suites passed"

demo:
	@bash scripts/demo.sh

# Port knocking in the switch (docs/beba.md): two hosts in namespaces, the
# os-ken BEBA port-knocking app, knocks, states shown with `oxflow ctl
# beba-dump-states`. Needs root.
.PHONY: demo-stateful
demo-stateful:
	@bash scripts/demo_stateful.sh

# HARMLESS in one command (docs/harmless.md): emulated legacy switch ->
# `oxflow harmless up` -> the os-ken app sees N ports -> all hosts ping ->
# `down --restore` (byte-identical). Needs root and Open vSwitch.
# MODE=trunk (default: oxflow --trunk) | proxy, HOSTS=N.
.PHONY: demo-harmless
demo-harmless:
	@bash scripts/demo_harmless.sh

# One run measuring oxflow, Open vSwitch and the plain forwarders on the same
# traffic; writes results/bench-<date>.md and .json (scripts/bench.sh). Not part
# of `make test`. QUICK=1: a short run; PARTS=pipeline,raw,fwd,oxflow,oxflow_xdp,ovs
# and SIZES=..., WORKLOADS=... select a subset.
QUICK ?= 0
bench: setup
	QUICK=$(QUICK) bash scripts/bench.sh

# Criterion micro-benchmarks of the packet parser and rewrites.
bench-packet: setup
	$(CARGO) bench -p packet -- --warm-up-time 1 --measurement-time 3

# Every `oxflow bench` experiment (default parameters) against oxflow and
# against a private Open vSwitch, then each pair overlaid:
# $(BENCH_OUT)/{oxflow,ovs,compare}/EXPERIMENT/index.html. Needs root.
BENCH_OUT ?= target/bench-compare
BENCH_EXPERIMENTS ?= timestamp_floor pkt_mod_latency flow_insertion control_channel stats_polling cpu_load
bench-compare: build
	@for e in $(BENCH_EXPERIMENTS); do \
	  for s in oxflow ovs; do \
	    target/release/oxflow bench run $$e --switch $$s --out $(BENCH_OUT)/$$s/$$e || exit 1; \
	  done; \
	  target/release/oxflow bench compare $(BENCH_OUT)/oxflow/$$e $(BENCH_OUT)/ovs/$$e --out $(BENCH_OUT)/compare/$$e || exit 1; \
	done

# The data-centre evaluation (docs/datacenter.md): a Spine-Leaf in Mininet,
# web-search and data-mining flows at 10/20/40 % load, oxflow vs Open vSwitch;
# report in results/datacenter-<time>/index.html. Needs root. About twelve
# minutes; EVAL_ARGS=--full for the paper's parameters (many hours).
.PHONY: eval-datacenter
EVAL_ARGS ?=
eval-datacenter: setup
	$(CARGO) build --release -p oxflow
	target/release/oxflow eval datacenter $(EVAL_ARGS)

# FlexForward on an 8-node hypercube of oxflow switches (root; docs/flexforward.md).
# FF_ARGS=--full for the paper's 10,000 pings and a switchover at t=20 s.
.PHONY: eval-flexforward
FF_ARGS ?=
eval-flexforward: setup
	$(CARGO) build --release -p oxflow
	PYTHONPATH=python OXFLOW_BIN=$(CURDIR)/target/release/oxflow $(PY) -m oxflow.flexforward_eval --out results/flexforward $(FF_ARGS)

# Regenerate the cross-check vectors from os-ken and scapy (committed files).
vectors: setup
	$(PY) python/tools/gen_ofp_vectors.py
	$(PY) python/tools/gen_beba_vectors.py
	$(PY) python/tools/gen_flexforward_vectors.py
	$(PY) python/tools/gen_packet_vectors.py

# Coverage-guided fuzzing of the OpenFlow decoder (needs nightly + cargo-fuzz).
FUZZ_SECONDS ?= 60
fuzz:
	cd fuzz && $(CARGO) +nightly fuzz run ofp_decode -- -max_total_time=$(FUZZ_SECONDS)

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
	rm -rf $(VENV)
