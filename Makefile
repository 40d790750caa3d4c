# Two commands do everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: run test bench browser venv clean

# The virtual environment is rebuilt whenever pyproject.toml changes.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

run: venv
	$(BIN)/tableref serve --demo

# Browser tests drive Debian's chromium; install it when we may (root with apt-get).
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; \
	  else \
	    echo "chromium not found: browser tests will be skipped (install Debian's chromium to run them)"; \
	  fi; \
	fi

# One worker per core (pytest-xdist): every test has its own folder and port, so they run apart.
test: venv browser
	$(BIN)/python -m pytest -n auto

bench: venv
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
