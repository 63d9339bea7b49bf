# Entry points; see README.md. Everything goes through the Python harness.
#
#   make setup                      .venv with the pinned harness dependencies (make test adds the tests')
#   make build [LANG=go]            set up and build implementations
#   make bench LANG=go N=1000000 [WORKLOAD=sleep] [BUF=1,100] [REPEAT=3] [OUT=results]
#              [DURATION=ms] [REGISTRY="a/impls.toml b/impls.toml"] [ARGS="--cpus 1,2 --timeout 60"]
#   make test [LANG=go]             harness tests, smoke runs, language tests (LANG: only those of go)
#   make list | report | clean

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python

# LANG doubles as the locale variable. Take it as an implementation selector
# only when given on make's command line (IMPL= works too), and keep it out of
# the environment of every recipe, so no measured program sees LANG=go.
ifeq ($(origin LANG),command line)
IMPL ?= $(value LANG)
unexport LANG
endif
IMPL ?= all
N ?= 1000

# Values reach the harness as single arguments, whatever they hold: each is
# taken unexpanded ($(value)), single-quoted for the shell (a ' inside
# becomes '\''), and passed as one word. `make bench N='1;touch x'` runs
# nothing but the harness, which rejects the value; an OUT with spaces stays
# one path. The harness gets the values as arguments, not as variables, so
# none of them is exported to the measured programs either.
quote = '$(subst ','\'',$(1))'
arg = $(call quote,$(if $(filter IMPL,$(1)),$(IMPL_VALUE),$(value $(1))))
# IMPL may hold $(value LANG) (above): expand that one level, never more.
IMPL_VALUE := $(if $(filter command environment,$(origin IMPL)),$(value IMPL),$(IMPL))
unexport IMPL N WORKLOAD BUF REPEAT OUT DURATION REGISTRY ARGS

# REGISTRY and ARGS are lists: split at spaces (make's words), each word one
# argument, quoted like the values above, never read by a shell: quotes and $
# in them are plain characters, so a path or an argument holding a space
# cannot be given through them (run the harness directly for that).
split_args = $(foreach w,$(value $(1)),$(call quote,$(w)))
REGISTRY_OPTS := $(foreach w,$(value REGISTRY),--registry $(call quote,$(w)))

OPTS := --impl $(call arg,IMPL) --n $(call arg,N)
ifdef WORKLOAD
OPTS += --workload $(call arg,WORKLOAD)
endif
ifdef BUF
OPTS += --buffer $(call arg,BUF)
endif
ifdef REPEAT
OPTS += --repeat $(call arg,REPEAT)
endif
ifdef OUT
OPTS += --out $(call arg,OUT)
endif
ifdef DURATION
OPTS += --duration-ms $(call arg,DURATION)
endif
OPTS += $(REGISTRY_OPTS)
ifdef ARGS
OPTS += $(call split_args,ARGS)
endif

# make test LANG=go: the harness tests parametrized by go's implementations or
# its language (conformance, smoke run, checklist; harness/tests/select_impl.py
# deselects the rest), then go's own tests. Without LANG: the whole suite.
ifeq ($(IMPL_VALUE),all)
PYTEST_SELECT :=
else
PYTEST_SELECT := -p harness.tests.select_impl --impl $(call arg,IMPL)
endif

.PHONY: setup build bench test list report clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "the harness needs Python 3.11 or newer (found " + sys.version.split()[0] + ")")'
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

# the tests' packages (pytest, scipy, psutil) on top: a first ./run.sh does not wait for them
$(VENV)/.installed-test: $(VENV)/.installed requirements-test.txt
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	@touch $@

build: setup
	$(VPY) -m harness build --impl $(call arg,IMPL) $(REGISTRY_OPTS)

bench: setup
	$(VPY) -m harness run $(OPTS)

list: setup
	$(VPY) -m harness list $(REGISTRY_OPTS)

report: setup
	$(VPY) -m harness report $(if $(value OUT),$(call quote,$(value OUT)/latest),results/latest)

# The suite on one pytest-xdist worker per core; tests that share something
# of the machine's (a language's build folder) carry one xdist_group and
# run on one worker, one after another. The 25 slowest are listed at the
# end: the suite's time is CI's feedback time, and they are where it goes.
test: $(VENV)/.installed-test
	$(VPY) -m pytest -q -n auto --dist loadgroup --durations=25 $(PYTEST_SELECT)
	$(VPY) -m harness test --impl $(call arg,IMPL) $(REGISTRY_OPTS)

clean:
	rm -rf $(VENV) harness/processes/launcher/launch .versions
