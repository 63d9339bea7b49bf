# Entry points; see README.md. Everything goes through the Python harness.
#
#   make setup                      .venv with the pinned harness dependencies
#   make build [LANG=go]            set up and build implementations
#   make bench LANG=go N=1000000 [WORKLOAD=sleep] [BUF=1,100] [REPEAT=3] [OUT=results]
#   make test                       harness tests, smoke runs of every implementation, language tests
#   make list | report | clean

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python

# LANG doubles as the locale variable. Take it as an implementation selector
# only when given on make's command line (IMPL= works too), and keep it out of
# the environment of every recipe, so no measured program sees LANG=go.
ifeq ($(origin LANG),command line)
IMPL ?= $(LANG)
unexport LANG
endif
IMPL ?= all

N ?= 1000
OPTS := --impl $(IMPL) --n $(N)
ifdef WORKLOAD
OPTS += --workload $(WORKLOAD)
endif
ifdef BUF
OPTS += --buffer $(BUF)
endif
ifdef REPEAT
OPTS += --repeat $(REPEAT)
endif
ifdef OUT
OPTS += --out $(OUT)
endif

.PHONY: setup build bench test list report clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "the harness needs Python 3.11 or newer (found " + sys.version.split()[0] + ")")'
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

build: setup
	$(VPY) -m harness build --impl $(IMPL)

bench: setup
	$(VPY) -m harness run $(OPTS)

list: setup
	$(VPY) -m harness list

report: setup
	$(VPY) -m harness report $(if $(OUT),$(OUT)/latest,results/latest)

test: setup
	$(VPY) -m pytest -q harness/tests
	$(VPY) -m harness test --impl $(IMPL)

clean:
	rm -rf $(VENV) harness/launcher/launch
