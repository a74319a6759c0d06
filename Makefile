# inferops.vllm_cluster: the lab and the test suite.
#   make lab        set up this machine, build the lab images, start the lab, run site.yml on it
#   make lab-down   remove the lab (containers, networks, volumes labelled inferops.vllm_cluster.lab)
#   make test       everything CI runs: lint, unit tests, sanity, molecule scenarios, integration
#   make bench      speed and memory on the lab, beside the hand procedure -> docs/benchmarks.md
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

VENV      ?= .venv
PYTHON    ?= python3
BIN       := $(VENV)/bin
export PATH := $(abspath $(BIN)):$(PATH)
export ANSIBLE_CONFIG := $(abspath ansible.cfg)
# The collection as Ansible expects to find it: <path>/ansible_collections/inferops/vllm_cluster.
COLLECTION_LINK := .ansible/collections/ansible_collections/inferops/vllm_cluster
# Add inventories/lab-3node for a third node: make lab LAB_INVENTORIES="inventories/lab inventories/lab-3node"
LAB_INVENTORIES ?= inventories/lab
LAB_I := $(addprefix -i ,$(LAB_INVENTORIES))
MOLECULE_SCENARIOS ?= default incident restarts mp

.PHONY: help setup host lab-images lab lab-up lab-down test lint unit sanity molecule integration bench clean

help:
	@sed -n 's/^#   //p' Makefile

$(BIN)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

$(COLLECTION_LINK):
	mkdir -p $(dir $@)
	ln -sfn ../../../.. $@

setup: $(BIN)/.installed $(COLLECTION_LINK)

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

test: setup lint unit sanity lab-images molecule integration

lint: setup
	yamllint --strict .
	ansible-lint

unit: setup
	pytest -q tests/unit

sanity: setup
	tests/sanity/run

molecule: setup lab-images
	for scenario in $(MOLECULE_SCENARIOS); do molecule test -s $$scenario; done

# Real playbook runs against a converged lab (tests/integration); the lab is removed afterwards.
integration: lab
	status=0; pytest -q tests/integration || status=$$?; $(MAKE) lab-down; exit $$status

# Unattended, 15 to 25 minutes on 2 cores, depending on how busy the host is; the lab (up to 4 nodes) is removed afterwards.
bench: setup lab-images
	status=0; python3 bench/run.py || status=$$?; $(MAKE) lab-down LAB_INVENTORIES="inventories/lab inventories/lab-3node inventories/lab-4node"; exit $$status

clean: lab-down
	rm -rf $(VENV) .ansible .cache
