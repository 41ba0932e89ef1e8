# Setup and everyday commands; `make install` then `make test` on a fresh clone.
SHELL := /bin/bash
# The interpreter .venv is made with: the distribution's /usr/bin/python3
# where it is 3.11 or newer, else the first python3 on PATH. Debian links
# its interpreter statically and builds it with profile-guided
# optimization; the sim's hot path spends some 44% of its instructions in
# CPython, and a source build with a shared libpython (pyenv's default)
# runs the GPINT benchmark with about 10% more instructions and 8% more
# instruction-cache misses (docs/sim_performance.md). PYTHON=... overrides.
PYTHON ?= $(shell /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  2>/dev/null && echo /usr/bin/python3 || echo python3)
VENV := .venv
BIN := $(VENV)/bin
# Debian packages the project uses: venv and headers for the Python that makes
# .venv; cpp, the C preprocessor the P4 front end runs on #include/#define;
# for the live targets redis-server, mininet (mnexec), iproute2, tcpdump; and
# valgrind, whose callgrind counts instructions for `intbed bench sim --instructions`.
# gcc builds the compiled fast path (`intbed accel build`, Cython's C for the
# sim's hot modules and the shipped programs' pipelines).
APT_PACKAGES := python3-venv python3-dev cpp gcc redis-server influxdb mininet iproute2 tcpdump valgrind
# Debian's perf, which `intbed bench sim --sample` samples with; installed when
# the distribution has the package (Ubuntu ships perf per kernel instead, and
# in a container it must match the host's kernel: without it, --sample says so).
APT_PERF := linux-perf

.PHONY: install accel clean test test-pure lint layers bench run-experiment test-bmv2 fuzz lab

install:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	    && ! dpkg -s $(APT_PACKAGES) >/dev/null 2>&1; then \
	  apt-get update && DEBIAN_FRONTEND=noninteractive \
	    apt-get install -y --no-install-recommends $(APT_PACKAGES); \
	fi
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	    && ! dpkg -s $(APT_PERF) >/dev/null 2>&1; then \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(APT_PERF) \
	    >/dev/null 2>&1 || echo "note: $(APT_PERF) not installed; intbed bench sim --sample" \
	    "needs perf" >&2; \
	fi
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	  || { echo "error: intbed needs Python >= 3.11; run make install PYTHON=python3.11" >&2; exit 1; }
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check -q -e '.[dev]'
	@$(BIN)/intbed accel build || echo "warning: the compiled fast path was not built;" \
	  "the sim runs in pure Python (same results, slower). See docs/sim_performance.md." >&2

# The compiled fast path again, after an edit of a hot module or a program
# (until then the edited module's group runs as Python, with a warning).
accel:
	$(BIN)/intbed accel build

# What builds and runs leave in the checkout: the fast path's extensions,
# bytecode and test caches. Never results/ (measurements are not rebuilt).
clean:
	@[ ! -x $(BIN)/intbed ] || $(BIN)/intbed accel clean
	rm -rf .accel .pytest_cache .ruff_cache
	find . -path ./.venv -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

# pytest exits 5 when it collected no test; this suite always has tests, so
# that means a broken checkout, not success.
test:
	@$(BIN)/python -m pytest -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest ran no tests" >&2; exit 1; fi; \
	exit $$rc

# The whole suite on the Python reference alone (INTBED_PURE_PYTHON=1): no
# compiled module or pipeline is loaded, in this process or its children.
test-pure:
	@INTBED_PURE_PYTHON=1 $(BIN)/python -m pytest -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest ran no tests" >&2; exit 1; fi; \
	exit $$rc

lint:
	$(BIN)/ruff check .

# The fuzz suite (tests/fuzz/) with fresh random inputs: the command line's
# fuzz tests with twenty times the examples `make test` draws with its fixed
# seed, and the differential tests on generated P4 programs (Python text
# against build, arithmetic against Python) with fresh seeds, some ten times
# as many programs as `make test` builds; a failure names its seed.
fuzz:
	INTBED_FUZZ_PROFILE=long $(BIN)/python -m pytest -q tests/fuzz

# Each package imports only the layers below it (tests/test_layers.py).
layers:
	$(BIN)/python -m tests.test_layers

bench:
	$(BIN)/intbed bench engine
	$(BIN)/intbed bench sim
	$(BIN)/intbed bench prep

# Every STF test under tests/p4, and the programs generated from seeds
# P4GEN_SEEDS (tests/fuzz/p4gen.py; their STF expectations from intbed's
# engine), on both intbed's engine and real BMv2 (built from its public
# sources and on PATH); lists every packet where they differ. Without
# simple_switch, simple_switch_CLI or p4c it says which is missing and
# compares nothing.
P4GEN_SEEDS ?= $(shell seq 0 19)
test-bmv2:
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT \
	  && $(BIN)/python tests/fuzz/p4gen.py "$$dir" $(P4GEN_SEEDS) \
	  && $(BIN)/python -m orchestration.binaries.bmv2_stf tests/p4 "$$dir"

# The main job: one paper figure on the sim target (results/EXP/...).
EXP ?= intlabel-fig9
ARGS ?=
run-experiment:
	$(BIN)/intbed run $(EXP) $(ARGS)

# The lab image (lab/Dockerfile): BMv2 with PI, p4c and Mininet built from their
# sources at pinned tags, intbed installed, then its smoke test run (it needs
# --privileged for namespaces and veths). The context is the committed tree.
LAB_IMAGE ?= intbed-lab
lab:
	@command -v docker >/dev/null 2>&1 \
	  || { echo "error: make lab needs Docker (or use lab/Vagrantfile); see lab/README.md" >&2; exit 1; }
	git archive --format=tar HEAD | docker build -f lab/Dockerfile -t $(LAB_IMAGE) -
	docker run --rm --privileged $(LAB_IMAGE)
