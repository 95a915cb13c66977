# The two commands a newcomer runs: `make serve` and `make test`; `make check` is the inner loop.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The UI tests drive Debian's Chromium (never a downloaded browser build).
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Spark and Kafka need a Java 17+ runtime; the Java member driver (jvm/src) needs javac.
JAVA := $(shell command -v java || echo /usr/bin/java)
JAVAC := $(shell command -v javac || echo /usr/bin/javac)
MVN := $(shell command -v mvn || echo /usr/bin/mvn)
# Apache Kafka (broker and Java client) from Maven Central, pinned in jvm/pom.xml, copied once
# into var/jvm/lib; later runs reuse it offline.
KAFKA := var/jvm/.resolved
# The service's load benchmark drives it with Debian's wrk.
WRK := /usr/bin/wrk

.PHONY: serve test check lint bench clean postgres-server lock audit mutants kafka

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Serving needs the [api] extra only; the tests need everything ([test] pulls in the rest).
SERVE_STAMP := $(VENV)/.installed-serve
# The installs build the package's C part (assignor/_topic_partitions.c, assignor/solver/_deal.c,
# assignor/wire/_compact_arrays.c, assignor/wire/_tp_arrays.c) in place: a change to it installs again.
BUILT := pyproject.toml constraints.txt assignor/_topic_partitions.c assignor/solver/_deal.c assignor/_buffers.h \
	assignor/wire/_compact_arrays.c assignor/wire/_tp_arrays.c

$(SERVE_STAMP): $(BUILT) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[api]'
	touch $(SERVE_STAMP)

$(STAMP): $(BUILT) | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP) $(SERVE_STAMP)

serve: $(SERVE_STAMP)
	$(BIN)/python -m api --host 127.0.0.1 --port 8000

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

$(JAVA) $(JAVAC):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless

$(MVN):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven

$(KAFKA): jvm/pom.xml | $(JAVA) $(JAVAC) $(MVN)
	rm -rf var/jvm/lib
	$(MVN) -B -q -Dstyle.color=never -f jvm/pom.xml dependency:copy-dependencies -DoutputDirectory=$(CURDIR)/var/jvm/lib
	touch $(KAFKA)

kafka: $(KAFKA)

# The registry tests start a throwaway PostgreSQL server from Debian's package.
postgres-server:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; }

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# Everything: lint, types and the whole suite, Apache Kafka, Spark, Chromium and PostgreSQL included:
# the tests that start no process on both cores (pytest-xdist), then those that do in two lanes
# side by side (tests/conftest.py): the broker's tests one at a time on one broker (their timings
# are the point of many of them; they mostly wait on the broker's clock), the others beside them.
test: $(STAMP) $(CHROMIUM) $(KAFKA) postgres-server lint
	$(BIN)/python -m pytest -m "not external" -n 2 -q --durations=10
	$(BIN)/python -m pytest -m external -n 2 --dist loadgroup --durations=25

# The inner loop (under 2 minutes here): lint, types and every test that starts no process beside
# the tests (no broker, Spark, Chromium, PostgreSQL, service or CLI run: `-m "not external"`),
# each property on a twentieth of CI's examples (the `dev` Hypothesis profile, tests/conftest.py).
check: lint
	HYPOTHESIS_PROFILE=dev $(BIN)/python -m pytest -m "not external" -n 2 -q

$(WRK):
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk

bench: $(STAMP) $(WRK) $(KAFKA)
	$(BIN)/python -m bench --write-readme

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis var/jvm assignor/_topic_partitions.*.so assignor/solver/_deal.*.so \
		assignor/wire/_compact_arrays.*.so assignor/wire/_tp_arrays.*.so

# The pinned versions (constraints.txt) from a fresh environment of the newest allowed versions.
lock:
	rm -rf /tmp/assignor-lock && $(PYTHON) -m venv /tmp/assignor-lock
	/tmp/assignor-lock/bin/python -m pip install --quiet -e '.[test]'
	{ head -2 constraints.txt; /tmp/assignor-lock/bin/python -m pip freeze --exclude-editable | sort -f; } > constraints.new
	mv constraints.new constraints.txt

# Known vulnerabilities in the pinned versions (needs the network to reach the advisory database).
audit: $(STAMP)
	$(BIN)/python -m pip install --quiet pip-audit
	$(BIN)/pip-audit -r constraints.txt

# Mutation testing of the code the tests must guard (the files and the tests that guard them:
# [tool.mutmut] in pyproject.toml); not part of `make test` (it takes long).
mutants: $(STAMP)
	$(BIN)/python -m pip install --quiet 'mutmut>=3,<4'
	$(BIN)/mutmut run
	$(BIN)/mutmut results
