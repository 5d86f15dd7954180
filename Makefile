# heapledger build. `make demo` and `make test` are the two commands README.md promises:
# each installs what it needs (Debian packages through scripts/install-deps.sh), builds, and runs.
SHELL := /bin/bash
GO ?= go
BIN := bin/heapledger

.PHONY: all deps build java maven go demo test test-go clean

all: build

deps:
	bash scripts/install-deps.sh

# The Java side (runtime, probe, agent, the Gradle plugin, test tools): scripts/build-java.sh runs
# the top-level build.gradle with Debian's Gradle, offline.
java:
	bash scripts/build-java.sh

# The Maven plugin, built with Debian's Maven offline and installed into the project's local
# repository (build/m2), where the Maven fixture finds it; bin/ gets the jar and its pom, to
# install into another repository (docs/build-plugins.md). Debian's Maven writes terminal resets
# even when quiet: its output is shown when it fails.
maven:
	@out=$$(bash scripts/maven.sh --quiet -f plugins/maven/pom.xml install 2>&1) || { echo "$$out" >&2; exit 1; }
	@echo "maven: build/maven/plugin/heapledger-maven-plugin.jar, installed into build/m2" >&2

# A static binary without urfave/cli's documentation generators (unused here): it starts in about
# 3.5 ms instead of 5.5 (no dynamic loader, no markdown package to initialise), which is most of a
# class histogram of a small dump.
GOBUILD := CGO_ENABLED=0 $(GO) build -tags urfave_cli_no_docs

go:
	$(GOBUILD) -o $(BIN) ./cli

# bin/ is a self-contained distribution: the binary finds its Java runtime beside itself.
build: java maven go
	@for j in heapledger-runtime heapledger-probe heapledger-agent heapledger-gradle-plugin; do \
		if [ -f build/$$j.jar ]; then cp -f build/$$j.jar bin/; fi; \
	done
	cp -f build/maven/plugin/heapledger-maven-plugin.jar bin/
	cp -f plugins/maven/pom.xml bin/heapledger-maven-plugin.pom

demo: deps build
	./$(BIN) demo

test-go:
	$(GO) vet ./...
	$(GO) test -timeout 25m ./...

test: deps build test-go

clean:
	rm -rf bin build
