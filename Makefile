# xpool: build, test, benchmark and install.
#
#   make            build ./xpool
#   make run        install missing libraries (as root), build, open the console
#   make check      install missing libraries (as root), build, run every test
#   make bench      run the benchmarks under tests/bench
#   make soak       the console (sanitizer build) over 50 restarting agents for SOAK_SECONDS
#                   (default 600): RSS, fds, threads and WAL must stay flat, LeakSanitizer
#                   clean at exit (tests/soak/soak.sh; not part of `make check`)
#   make install    PREFIX=/usr/local DESTDIR= honoured
#   make deps       check the libraries with pkg-config, apt-get them when root
#   make fuzz       run every libFuzzer harness (tests/fuzz) FUZZ_SECONDS each (default 20)
#
# Options: WERROR=1 adds -Werror; SANITIZE=1 builds with ASan+UBSan into build/san
# (the program is then build/san/xpool, ./xpool is left alone).

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR   = $(PREFIX)/bin
MANDIR   = $(PREFIX)/share/man

CC      ?= cc
PKG_CONFIG ?= pkg-config
# Every library xpool uses, as pkg-config names, and the Debian packages that ship them.
PKGS     = ncursesw libcurl jansson readline hwloc sqlite3 check libmicrohttpd libxml-2.0 yaml-0.1
DEB_PKGS = gcc libc6-dev pkg-config libncurses-dev libcurl4-openssl-dev libjansson-dev libreadline-dev \
           libhwloc-dev libsqlite3-dev check libmicrohttpd-dev libxml2-dev libyaml-dev groff-base tmux \
           ncurses-term
# Tools only the tests run (promtool checks the agent's /metrics, openssl makes its test
# certificate, the README's examples use jq and curl, tests/slurm_check.sh runs a private
# munged and slurmctld and sbatch --test-only, tests/slurm_backfill_check.sh the same daemons
# with sched/backfill, tests/schema_check.sh runs node with npm's
# kubernetes-models and Debian's python3 with jsonschema), installed by `make check` and not by
# `make run`, each as TOOL:PACKAGE (only the packages of missing tools are installed: a machine
# whose node and npm come from elsewhere, as NodeSource's nodejs that holds npm and conflicts
# with Debian's, keeps them). TEST_PY_MODULES: what /usr/bin/python3 must import.
TEST_TOOLS    = promtool:prometheus openssl:openssl jq:jq curl:curl munged:munge slurmctld:slurmctld \
                sbatch:slurm-client node:nodejs npm:npm
TEST_PY_MODULES = jsonschema yaml

ifeq ($(FUZZ),1)
# `make fuzz` builds the engine again with clang for libFuzzer, into build/fuzz (not the
# console's ui/: no harness reads through it, and CI's fuzz step is timed).
B        = build/fuzz
CC       = clang
SANFLAGS = -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
PROG     = $(B)/xpool
else ifeq ($(SANITIZE),1)
B        = build/san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
PROG     = $(B)/xpool
else
B        = build/rel
SANFLAGS =
PROG     = xpool
endif

WARN    = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
          -Wno-missing-field-initializers
ifeq ($(WERROR),1)
WARN   += -Werror
endif

# Lazily expanded, so that `make deps` can install the libraries first.
LIB_CFLAGS = $(shell $(PKG_CONFIG) --cflags ncursesw readline jansson hwloc libxml-2.0 sqlite3 libcurl libmicrohttpd yaml-0.1 2>/dev/null)
LIB_LIBS   = $(shell $(PKG_CONFIG) --libs ncursesw readline jansson hwloc libxml-2.0 sqlite3 libcurl libmicrohttpd yaml-0.1 2>/dev/null) -pthread
CHECK_CFLAGS = $(shell $(PKG_CONFIG) --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell $(PKG_CONFIG) --libs check 2>/dev/null)

CFLAGS  ?= -O2 -g
# src/ is split by layer (src/README.md); every layer's folder is on the include path, so a
# header is named by its file name alone and a module can move between layers freely.
SRC_DIRS = $(patsubst %/,%,$(sort $(dir $(wildcard src/*/*.c src/*/*.h))))
XCFLAGS  = -std=c11 -D_GNU_SOURCE $(WARN) $(SANFLAGS) -Isrc $(addprefix -I,$(SRC_DIRS)) -Ibackends -Iui -Iadapters \
           -I$(B)/gen $(LIB_CFLAGS) \
           -DXP_DATADIR='"$(PREFIX)/share/xpool"' -DXP_LIBDIR='"$(PREFIX)/lib/xpool"' -pthread -MMD -MP
XLDFLAGS = $(SANFLAGS) $(LDFLAGS)

# Core: everything but main.c, shared by the program and the tests.
CORE_SRC = $(wildcard src/*/*.c) $(wildcard backends/*.c backends/*/*.c) \
           $(if $(filter 1,$(FUZZ)),,$(wildcard ui/*.c))
CORE_OBJ = $(CORE_SRC:%.c=$(B)/obj/%.o) $(patsubst %.c,$(B)/obj/%.o,$(wildcard adapters/common/*.c))
MAIN_OBJ = $(B)/obj/src/main.o

# Adapters: adapters/NAME/*.c plus adapters/common/*.c become $(B)/adapters/xp_NAME.so;
# the same objects (position-independent) form a static library the tests link,
# so parsers are tested as plain functions.
ADAPTER_NAMES  = $(notdir $(patsubst %/,%,$(filter-out adapters/common/,$(wildcard adapters/*/))))
ADAPTER_COMMON = $(wildcard adapters/common/*.c)
ADAPTER_SRC    = $(ADAPTER_COMMON) $(foreach a,$(ADAPTER_NAMES),$(wildcard adapters/$(a)/*.c))
ADAPTER_OBJ    = $(ADAPTER_SRC:%.c=$(B)/obj/%.o)
ADAPTER_SO     = $(ADAPTER_NAMES:%=$(B)/adapters/xp_%.so)
ADAPTER_LIBS   = $(shell $(PKG_CONFIG) --libs jansson libxml-2.0 2>/dev/null) -ldl -lm
TEST_SRC = $(sort $(wildcard tests/check_*.c))
TEST_OBJ = $(TEST_SRC:%.c=$(B)/obj/%.o) $(B)/obj/tests/testlib.o $(B)/obj/tests/tmuxlib.o $(B)/obj/tests/fakehost.o \
           $(B)/obj/tests/cluster.o $(B)/obj/tests/suitelib.o $(B)/obj/tests/checklib.o $(B)/obj/tests/k8slib.o $(B)/obj/tests/runner.o
# Fuzz harnesses: tests/fuzz/fuzz_NAME.c, one per input xpool reads (tests/fuzz/fuzz.h). Built
# with libFuzzer by `make fuzz`; in every other build with fuzz_main.c instead, so that `make
# check` replays their regression inputs and seeds under that build's compiler and sanitizers.
FUZZ_SRC  = $(filter-out tests/fuzz/fuzz_lib.c tests/fuzz/fuzz_main.c,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BIN  = $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%)
ifeq ($(FUZZ),1)
FUZZ_LINK = -fsanitize=fuzzer
FUZZ_MAIN =
else
FUZZ_LINK =
FUZZ_MAIN = $(B)/obj/tests/fuzz/fuzz_main.o
endif
# Objects of the harnesses' helpers, kept: as prerequisites of a pattern rule only, make
# would take them for intermediates and delete them after every build.
.SECONDARY: $(B)/obj/tests/fuzz/fuzz_lib.o $(B)/obj/tests/fuzz/fuzz_main.o
FUZZ_SECONDS ?= 20
FUZZ_JOBS    ?= 2
BENCH_SRC = $(wildcard tests/bench/*.c)
BENCH_BIN = $(BENCH_SRC:tests/bench/%.c=$(B)/bench/%)

.PHONY: all run check test bench bench-run soak install uninstall clean deps test-deps fuzz fuzz-bins fuzz-run fuzz-deps
.DEFAULT_GOAL := all

all: $(PROG) $(ADAPTER_SO)

$(PROG): $(MAIN_OBJ) $(B)/libxpool.a
	$(CC) $(XLDFLAGS) -o $@ $(MAIN_OBJ) $(B)/libxpool.a $(LIB_LIBS) -ldl -lm

$(B)/obj/adapters/%.o: adapters/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) -Iadapters -fPIC $(CFLAGS) -c -o $@ $<

$(B)/libadapters.a: $(ADAPTER_OBJ) Makefile
	@rm -f $@
	$(AR) rcs $@ $(filter %.o,$^)

.SECONDEXPANSION:
$(B)/adapters/xp_%.so: $$(addsuffix .o,$$(addprefix $(B)/obj/,$$(basename $$(wildcard adapters/$$*/*.c)))) \
		$(ADAPTER_COMMON:%.c=$(B)/obj/%.o)
	@mkdir -p $(@D)
	$(CC) $(XLDFLAGS) -shared -o $@ $^ $(ADAPTER_LIBS)

# The archives depend on the Makefile too: an object added to the list must get in
# even when it is older than the archive.
# Test adapters: small shared objects that exercise the loader's refusals.
TEST_ADAPTER_SO = $(patsubst tests/adapters/%.c,$(B)/testadapters/%.so,$(wildcard tests/adapters/*.c))
$(B)/testadapters/%.so: tests/adapters/%.c $(ADAPTER_COMMON:%.c=$(B)/obj/%.o) $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) -Iadapters -fPIC -shared $(CFLAGS) -o $@ $< $(ADAPTER_COMMON:%.c=$(B)/obj/%.o)

$(B)/libxpool.a: $(CORE_OBJ) Makefile
	@rm -f $@
	$(AR) rcs $@ $(filter %.o,$^)

# Objects depend on the flags they were built with: WERROR=1 after a plain build
# must recompile, or warnings would slip through.
FLAGS_STAMP = $(B)/flags.stamp
$(shell mkdir -p $(B); printf '%s\n' '$(CC) $(XCFLAGS) $(CFLAGS)' | cmp -s - $(FLAGS_STAMP) || \
	printf '%s\n' '$(CC) $(XCFLAGS) $(CFLAGS)' > $(FLAGS_STAMP))

$(B)/obj/%.o: %.c $(FLAGS_STAMP) | $(B)/gen/adapter_names.inc
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/obj/tests/%.o: tests/%.c $(FLAGS_STAMP) | $(B)/gen/adapter_names.inc
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) $(CHECK_CFLAGS) $(CFLAGS) -c -o $@ $<

# The test runner's suite list is generated from the file names: tests/check_NAME.c
# defines `Suite *xp_suite_NAME(void)`, so adding a suite is adding a file.
$(B)/gen/suites.inc: $(TEST_SRC) Makefile
	@mkdir -p $(@D)
	@for f in $(TEST_SRC); do n=$${f#tests/check_}; n=$${n%.c}; echo "XP_SUITE($$n)"; done > $@.tmp
	@cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@

$(B)/obj/tests/runner.o: $(B)/gen/suites.inc

# Console views likewise: ui/view_NAME.c defines `const struct xp_view xp_view_NAME`.
VIEW_SRC = $(sort $(wildcard ui/view_*.c))
$(B)/gen/views.inc: $(VIEW_SRC) Makefile
	@mkdir -p $(@D)
	@for f in $(VIEW_SRC); do n=$${f#ui/view_}; n=$${n%.c}; echo "XP_VIEW($$n)"; done > $@.tmp
	@cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@

$(B)/obj/ui/app.o: $(B)/gen/views.inc

# The adapters the build has, in the order they are tried: each manifest's `order` key (lower
# first, 500 when absent), then the name. A new vendor is a folder under adapters/, nothing else.
ADAPTER_ORDER = $(shell for a in $(ADAPTER_NAMES); do \
	o=$$(sed -n 's/^order *= *\([0-9][0-9]*\) *$$/\1/p' adapters/$$a/$$a.adapter 2>/dev/null | head -n 1); \
	echo "$${o:-500} $$a"; done | sort -k1,1n -k2,2 | cut -d' ' -f2)
$(B)/gen/adapter_names.inc: $(wildcard adapters/*/*.adapter) Makefile
	@mkdir -p $(@D)
	@{ printf '#define XP_ADAPTER_NAMES {'; sep=; for a in $(ADAPTER_ORDER); do printf '%s"%s"' "$$sep" $$a; sep=', '; done; \
	   printf '}\n#define XP_ADAPTER_COUNT %s\n' $(words $(ADAPTER_ORDER)); } > $@.tmp
	@cmp -s $@.tmp $@ 2>/dev/null && rm -f $@.tmp || mv $@.tmp $@

$(B)/tests/runner: $(TEST_OBJ) $(B)/libxpool.a $(B)/libadapters.a
	@mkdir -p $(@D)
	$(CC) $(XLDFLAGS) -o $@ $(TEST_OBJ) $(B)/libxpool.a $(B)/libadapters.a $(LIB_LIBS) $(CHECK_LIBS) -ldl -lm

# Benchmarks link the tests' helpers too (bench_agents starts real agents with them,
# bench_engines the loopback Kubernetes API server).
$(B)/bench/%: tests/bench/%.c $(B)/obj/tests/testlib.o $(B)/obj/tests/k8slib.o $(B)/libxpool.a $(B)/libadapters.a $(FLAGS_STAMP) \
		| $(B)/gen/adapter_names.inc
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) -Itests -MF $@.d $(CFLAGS) -o $@ $< $(B)/obj/tests/testlib.o $(B)/obj/tests/k8slib.o $(B)/libxpool.a $(B)/libadapters.a \
	    $(LIB_LIBS) -ldl -lm

$(B)/fuzz/%: tests/fuzz/%.c $(B)/obj/tests/fuzz/fuzz_lib.o $(FUZZ_MAIN) $(B)/libxpool.a $(B)/libadapters.a $(FLAGS_STAMP) \
		| $(B)/gen/adapter_names.inc
	@mkdir -p $(@D)
	$(CC) $(XCFLAGS) -Itests -Itests/fuzz $(FUZZ_LINK) -MF $@.d $(CFLAGS) -o $@ $< $(B)/obj/tests/fuzz/fuzz_lib.o $(FUZZ_MAIN) \
	    $(B)/libxpool.a $(B)/libadapters.a $(LIB_LIBS) -ldl -lm

# `make check`: deps first (in its own make so pkg-config sees fresh installs), then tests.
check: deps test-deps
	@$(MAKE) --no-print-directory test

# The manual, README and layer checks run first so that the check runner's summary is the last line.
# hwloc's PCI plugin and libpciaccess keep allocations for the process's life;
# LeakSanitizer is told so, and nothing of ours is suppressed.
export LSAN_OPTIONS = suppressions=$(abspath tests/lsan.supp):print_suppressions=0

# The benchmarks are built (not run) too, so that -Werror and the sanitizers see their code.
test: $(PROG) $(ADAPTER_SO) $(TEST_ADAPTER_SO) $(B)/tests/runner $(BENCH_BIN) $(FUZZ_BIN)
	@sh tests/fuzz/replay.sh $(FUZZ_BIN)
	@XPOOL_BIN=$(abspath $(PROG)) sh tests/man_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/readme_check.sh
	@sh tests/layers.sh $(B)/obj
	@XPOOL_BIN=$(abspath $(PROG)) sh tests/internals_check.sh
	@sh tests/security_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/slurm_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) RUNNER=$(abspath $(B)/tests/runner) bash tests/slurm_backfill_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/slurm_source_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/slurm_compare_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/slurm_running_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/slurm_console_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/slurm_node_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/slurm_json_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/schema_check.sh
	@XPOOL_BIN=$(abspath $(PROG)) bash tests/netfault_check.sh
	XPOOL_BIN=$(abspath $(PROG)) XP_FIXTURES=$(abspath tests/fixtures) XP_TESTADAPTERS=$(abspath $(B)/testadapters) \
	    CK_DEFAULT_TIMEOUT=60 $(B)/tests/runner

# `make fuzz`: clang and its libFuzzer runtime first, then every harness in build/fuzz.
# `make` alone compiles one file at a time, and CI's fuzz step is timed: the harnesses are
# built on every core, unless the user gave a -j (theirs is kept).
fuzz: deps fuzz-deps
	@case " $$MAKEFLAGS " in *" -j"*) j= ;; *) j=-j$$(nproc 2>/dev/null || echo 1) ;; esac; \
	$(MAKE) --no-print-directory $$j FUZZ=1 fuzz-bins
	@$(MAKE) --no-print-directory FUZZ=1 fuzz-run

fuzz-bins: $(FUZZ_BIN)

fuzz-run: $(FUZZ_BIN)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_JOBS=$(FUZZ_JOBS) sh tests/fuzz/run.sh $(B) $(FUZZ_BIN)

# libFuzzer is in clang's runtime package, not in clang itself: link a one-line fuzzer to know.
fuzz-deps: deps
	@missing=""; t=$$(mktemp -d); \
	printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' > $$t/f.c; \
	clang -fsanitize=fuzzer,address,undefined -o $$t/f $$t/f.c >/dev/null 2>&1 || missing=" clang+libFuzzer"; \
	rm -rf $$t; \
	$(call apt_install,make fuzz needs,clang libclang-rt-dev)

run: deps
	@$(MAKE) --no-print-directory all
	./$(PROG) $(ARGS)

bench: deps
	@$(MAKE) --no-print-directory bench-run

# BENCH=engines,sched runs only those (names of tests/bench/bench_*.c; slurm_compare for the
# sbatch --test-only comparison): the whole set takes more than 20 minutes on two cores.
BENCH ?=
BENCH_PICK = $(if $(BENCH),$(filter $(foreach n,$(subst $(comma), ,$(BENCH)),$(B)/bench/bench_$(n)),$(BENCH_BIN)),$(BENCH_BIN))
comma := ,
BENCH_BAD = $(filter-out slurm_compare $(BENCH_BIN:$(B)/bench/bench_%=%),$(subst $(comma), ,$(BENCH)))

bench-run: $(PROG) $(ADAPTER_SO) $(BENCH_BIN)
	@$(if $(BENCH_BAD),echo "BENCH=$(BENCH): no benchmark named $(BENCH_BAD)" >&2; exit 2)
	@for b in $(BENCH_PICK); do XPOOL_BIN=$(abspath $(PROG)) XP_FIXTURES=$(abspath tests/fixtures) $$b || exit 1; done
	@$(if $(BENCH),$(if $(filter slurm_compare,$(subst $(comma), ,$(BENCH))),XPOOL_BIN=$(abspath $(PROG)) bash tests/bench/slurm_compare_bench.sh,:),XPOOL_BIN=$(abspath $(PROG)) bash tests/bench/slurm_compare_bench.sh)

# The console under test is the sanitizer build (build/san/xpool), so LeakSanitizer looks at it
# when it quits; the agents and the store's writers are the release build.
SOAK_SECONDS ?= 600
soak: deps
	@$(MAKE) --no-print-directory SANITIZE= all
	@$(MAKE) --no-print-directory SANITIZE=1 all
	@SOAK_SECONDS=$(SOAK_SECONDS) XPOOL_BIN=$(abspath xpool) XPOOL_SAN_BIN=$(abspath build/san/xpool) \
	    bash tests/soak/soak.sh

install: $(PROG) $(ADAPTER_SO)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
	    $(DESTDIR)$(PREFIX)/share/xpool/themes $(DESTDIR)$(PREFIX)/lib/xpool/adapters
	install -m 0755 $(PROG) $(DESTDIR)$(BINDIR)/xpool
	install -m 0644 man/xpool.1 $(DESTDIR)$(MANDIR)/man1/xpool.1
	install -m 0644 man/xpool.conf.5 $(DESTDIR)$(MANDIR)/man5/xpool.conf.5
	install -m 0644 man/xpool-internals.7 $(DESTDIR)$(MANDIR)/man7/xpool-internals.7
	install -m 0644 man/xpool-security.7 $(DESTDIR)$(MANDIR)/man7/xpool-security.7
	install -m 0644 themes/*.theme $(DESTDIR)$(PREFIX)/share/xpool/themes/
	$(if $(ADAPTER_SO),install -m 0755 $(ADAPTER_SO) $(DESTDIR)$(PREFIX)/lib/xpool/adapters/)
	$(if $(ADAPTER_NAMES),install -m 0644 $(foreach a,$(ADAPTER_NAMES),$(wildcard adapters/$(a)/*.adapter)) \
	    $(DESTDIR)$(PREFIX)/lib/xpool/adapters/)

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/xpool $(DESTDIR)$(MANDIR)/man1/xpool.1 $(DESTDIR)$(MANDIR)/man5/xpool.conf.5 \
	    $(DESTDIR)$(MANDIR)/man7/xpool-internals.7 $(DESTDIR)$(MANDIR)/man7/xpool-security.7
	rm -rf $(DESTDIR)$(PREFIX)/share/xpool $(DESTDIR)$(PREFIX)/lib/xpool

clean:
	rm -rf build xpool

# Checks every library with pkg-config; installs the Debian packages when root,
# otherwise prints the exact command and fails.
deps:
	@missing=""; \
	command -v $(PKG_CONFIG) >/dev/null 2>&1 || missing="pkg-config"; \
	if [ -z "$$missing" ]; then \
	  for p in $(PKGS); do $(PKG_CONFIG) --exists $$p || missing="$$missing $$p"; done; \
	  for t in cc groff tmux; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	fi; \
	$(call apt_install,missing,$(DEB_PKGS))

# After deps: two apt-gets at once (make -j) would fight over apt's lock.
test-deps: deps
	@missing=""; pkgs=""; for tp in $(TEST_TOOLS); do t=$${tp%%:*}; \
	  command -v $$t >/dev/null 2>&1 || { missing="$$missing $$t"; pkgs="$$pkgs $${tp#*:}"; }; done; \
	for m in $(TEST_PY_MODULES); do /usr/bin/python3 -c "import $$m" >/dev/null 2>&1 || \
	  { missing="$$missing python3-$$m"; pkgs="$$pkgs python3-$$m"; }; done; \
	$(call apt_install,tests need,$$pkgs)

# The tail of deps and test-deps: when $$missing names something, install the Debian packages
# $(2) as root, otherwise print the exact command and fail. $(1) says what was looked for.
define apt_install
if [ -n "$$missing" ]; then \
	  echo "xpool: $(1):$$missing"; \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "xpool: installing: apt-get install -y $(2)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null || exit 1; \
	  else \
	    echo "xpool: run as root: apt-get install -y $(2)"; exit 1; \
	  fi; \
	fi
endef

-include $(CORE_OBJ:.o=.d) $(MAIN_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(ADAPTER_OBJ:.o=.d) $(BENCH_BIN:=.d) $(FUZZ_BIN:=.d)
