# inferops.vllm_cluster: the lab and the test suite.
#   make lab        set up this machine, build the lab images, start the lab, run site.yml on it
#   make lab-down   remove the lab and the second one, inventories/lab-b (what is labelled inferops.vllm_cluster.lab)
#   make lab-reset  empty the running lab's nodes (containers, the collection's files; images and the head's model stay)
#   make test       everything CI runs, on the lab and a second one beside it, static checks beside both (tests/suite/run)
#   make test-fast  lint, unit tests, sanity: no lab, a few minutes
#   make integration K=EXPR   integration tests matching EXPR (pytest -k) against the lab that is up
#   make verify S=SCENARIO    one molecule scenario's verify against the lab that is up (converged for it)
#   make rollbacks  the upgrade tests that roll back (~6 min) against the lab that is up; not in make test
#   make molecule   each molecule scenario alone, on a lab of its own (molecule test -s NAME)
#   make bench      speed and memory on the lab, beside the hand procedure -> docs/benchmarks.md
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

VENV      ?= .venv
PYTHON    ?= python3
BIN       := $(VENV)/bin
# Built things that outlive a clone, each keyed by what builds it, so a fresh clone on a machine that already ran
# the suite reuses them (the venv by requirements.txt, lab/build-images' wheels and image archive, sanity's venv)
# and a fresh machine builds them all from nothing.
export INFEROPS_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/inferops-vllm-cluster
REQUIREMENTS_HASH := $(shell sha256sum requirements.txt 2>/dev/null | cut -c1-12)
VENV_BUILD := $(INFEROPS_CACHE_DIR)/venv-$(REQUIREMENTS_HASH)
# This clone's record that $(VENV) links to the venv of this requirements.txt (named by its hash, so an edit of it
# asks for another venv; in the clone, so another clone's build never stands for this one).
VENV_STAMP := .cache/venv-$(REQUIREMENTS_HASH).linked
export PATH := $(abspath $(BIN)):$(PATH)
export ANSIBLE_CONFIG := $(abspath ansible.cfg)
# The collection as Ansible expects to find it: <path>/ansible_collections/inferops/vllm_cluster.
COLLECTION_LINK := .ansible/collections/ansible_collections/inferops/vllm_cluster
# Add inventories/lab-3node for a third node: make lab LAB_INVENTORIES="inventories/lab inventories/lab-3node"
LAB_INVENTORIES ?= inventories/lab
LAB_I := $(addprefix -i ,$(LAB_INVENTORIES))
MOLECULE_SCENARIOS ?= default incident restarts mp

.PHONY: help setup host lab-images lab lab-up lab-down lab-reset test test-fast lint unit sanity molecule integration rollbacks verify bench clean

help:
	@sed -n 's/^#   //p' Makefile

# $(VENV) is a link to the cached venv for this requirements.txt, built there when missing, under a lock (two clones
# may build at once; `.complete` is written last, so an interrupted build is started again rather than used).
$(VENV_STAMP): requirements.txt
	@[[ -n "$(REQUIREMENTS_HASH)" && -n "$(INFEROPS_CACHE_DIR)" ]] || { echo "requirements.txt or INFEROPS_CACHE_DIR missing" >&2; exit 1; }
	mkdir -p $(INFEROPS_CACHE_DIR) .cache
	flock $(INFEROPS_CACHE_DIR)/venv.lock bash -c '\
	  if [[ ! -f $(VENV_BUILD)/.complete ]]; then \
	    rm -rf $(VENV_BUILD) && $(PYTHON) -m venv $(VENV_BUILD) && \
	    $(VENV_BUILD)/bin/pip install -q --disable-pip-version-check -r requirements.txt && touch $(VENV_BUILD)/.complete; \
	  fi'
	if [[ -d $(VENV) && ! -L $(VENV) ]]; then rm -rf $(VENV); fi
	ln -sfn $(VENV_BUILD) $(VENV)
	touch $@

$(COLLECTION_LINK):
	mkdir -p $(dir $@)
	ln -sfn ../../../.. $@

setup: $(VENV_STAMP) $(COLLECTION_LINK)

host:
	lab/host-setup

lab-images: host
	lab/build-images

lab-up: setup lab-images
	ansible-playbook $(LAB_I) lab/playbooks/create.yml

lab: lab-up
	ansible-playbook $(LAB_I) site.yml

lab-down: setup
	ansible-playbook $(LAB_I) lab/playbooks/destroy.yml
	ansible-playbook -i inventories/lab-b lab/playbooks/destroy.yml

lab-reset: setup
	ansible-playbook $(LAB_I) lab/playbooks/reset.yml

test:
	tests/suite/run

test-fast: setup lint unit sanity

lint: setup
	yamllint --strict .
	ansible-lint

unit: setup
	pytest -q tests/unit

sanity: setup
	tests/sanity/run

molecule: setup lab-images
	for scenario in $(MOLECULE_SCENARIOS); do molecule test -s $$scenario; done

# Against the lab that is up (make lab): real playbook runs (tests/integration), in the suite's order.
K ?=
integration: setup
	pytest -p no:cacheprovider -q tests/integration $(if $(K),-k "$(K)")

# The upgrade tests that roll back (two deploys with Ray restarts each, ~6 min): not in `make test`.
rollbacks: setup
	pytest -p no:cacheprovider -q -m rollbacks tests/integration

S ?= default
verify: setup
	molecule verify -s $(S)

# Unattended, 15 to 25 minutes on 2 cores, depending on how busy the host is; the lab (up to 4 nodes) is removed afterwards.
bench: setup lab-images
	status=0; python3 bench/run.py || status=$$?; $(MAKE) lab-down LAB_INVENTORIES="inventories/lab inventories/lab-3node inventories/lab-4node"; exit $$status

clean: lab-down
	rm -rf $(VENV) .ansible .cache
	@echo "kept: $(INFEROPS_CACHE_DIR) (venvs, wheels, image archives; remove it by hand to rebuild them)"
