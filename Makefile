# pyebpf: build, test, install.  See README.md.
CC      ?= gcc
CLANG   ?= clang
BPFTOOL ?= bpftool
PYTHON  ?= python3

# The CPU to build for, by libbpf's name (__TARGET_ARCH_*): this machine's,
# or ARCH=arm64 on an x86-64 one, a cross build with Debian's
# aarch64-linux-gnu toolchain and arm64 libraries (make deps ARCH=arm64)
# into build-arm64/. What differs per CPU is include/pyebpf_arch.h and
# bpf/arch.bpf.h.
.DEFAULT_GOAL := all
HOST_ARCH := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(shell uname -m)))
ARCH    ?= $(HOST_ARCH)
ifeq ($(filter x86 arm64,$(ARCH)),)
$(error pyebpf builds for x86 (x86-64) and arm64, not $(ARCH))
endif
ifneq ($(ARCH),$(HOST_ARCH))
ifneq ($(ARCH)-$(HOST_ARCH),arm64-x86)
$(error a cross build goes from x86-64 to arm64; on this $(HOST_ARCH) machine, plain make)
endif
CROSS   := aarch64-linux-gnu-
CC      := $(CROSS)gcc
BUILD   := build-$(ARCH)
else
BUILD   := build
endif
CXX     := $(CROSS)g++
STRIP   := $(CROSS)strip
OBJCOPY := $(CROSS)objcopy
PKG_CONFIG := $(CROSS)pkg-config
# The suite whose arm64 kernel and root test an arm64 build (kernel-test-arm64).
ARM64_SUITE ?= bookworm
# The suite whose guest then runs the --native test alone: its interpreter
# signs the return addresses it saves (branch protection, Debian's arm64
# default since trixie), which the unwinder must strip. Empty: none.
ARM64_SIGNED_SUITE ?= trixie
# The kernel's types for the BPF programs: x86-64's at the top, arm64's
# from Debian's sid arm64 kernel (make vmlinux ARCH=arm64). 7.x's BTF has
# anonymous tagged members (struct ns_tree;) bookworm's bpftool dumps as
# they are: -fms-extensions reads them with the kernel's layout.
VMLINUX_DIR := $(if $(filter arm64,$(ARCH)),bpf/arm64,.)
BPF_ARCH_FLAGS := $(if $(filter arm64,$(ARCH)),-fms-extensions -Wno-microsoft-anon-tag)
# The CPythons beyond pyenv's (sid's 3.14 and 3.15, a free-threaded 3.13t),
# from Debian's archive, cached here by `make deps` (.ci/pythons.sh); the
# tests read PYEBPF_PYTHONS_DIR.
PYTHONS_DIR ?= /var/cache/pyebpf/pythons
export PYEBPF_PYTHONS_DIR := $(PYTHONS_DIR)

# V=1 shows every command.
ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @echo "  $(1)$(2)"
endif

CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror
CPPFLAGS := -D_GNU_SOURCE -Iinclude -I$(BUILD) -Iuser
DEPFLAGS = -MMD -MP
# pyebpf is one static binary: it needs no library of the host's, not even
# glibc's (the kernel matrix and every package run this very file). Every
# library comes from Debian's -dev packages' static archives but two, built
# from Debian's sources by make deps (.ci/static-libs.sh): libcurl trimmed
# to HTTP(S) over OpenSSL with c-ares, and libmicrohttpd without TLS.
# A static glibc must not load the host's shared objects (NSS modules of
# another glibc, libdebuginfod): dlopen is wrapped to refuse
# (user/base/no_dlopen.c), and the link fails if anything would ask NSS
# (getpwnam, getaddrinfo...): glibc warns of each such use at link time.
STATIC_LIBS ?= /var/cache/pyebpf/static/$(ARCH)
CPPFLAGS += -isystem $(STATIC_LIBS)/include
LDFLAGS := -static -L$(STATIC_LIBS)/lib -Wl,--gc-sections -Wl,--wrap=dlopen
LDLIBS  := -ldw -lelf -lbz2 -llzma -lz -lprotobuf-c -lmicrohttpd -lcurl -lcares -lssl -lcrypto \
	-lncursesw -ltinfo -lstdc++ -lpthread -lm
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# Pure logic: no libbpf, so the unit tests link it alone. sampler.c is the one
# file that links libbpf; record.c and main.c drive it.
BPF_SRCS  := user/main.c user/record/record.c user/record/sampler.c user/live/dump.c user/live/live_top.c \
	user/record/record_targets.c
# serve.c is the one file that links libmicrohttpd (serve_api.c answers without HTTP);
# push/sender.c the one that links libcurl (push/*.c build what it sends, without the network).
NET_SRCS  := user/serve/serve.c user/push/sender.c user/push/push_main.c user/record/record_push.c
# live_screen.c is the one file that links ncurses (live_table.c, live_format.c: top's numbers and text).
SCREEN_SRCS := user/live/live_screen.c
PURE_SRCS := $(filter-out $(BPF_SRCS) $(NET_SRCS) $(SCREEN_SRCS),$(wildcard user/*.c user/*/*.c))
USER_SRCS := $(PURE_SRCS) $(BPF_SRCS) $(NET_SRCS) $(SCREEN_SRCS)
# The schemas, compiled by protoc-c (generated code: not held to our warnings):
# pprof's, Pyroscope's push request and OTLP's profiles.
PROTOS    := profile pyroscope otlp
PROTO_OBJ := $(patsubst %,$(BUILD)/obj/%.pb-c.o,$(PROTOS))
PROTO_ASAN := $(patsubst %,$(BUILD)/asan/%.pb-c.o,$(PROTOS))
PROTO_HDRS := $(patsubst %,$(BUILD)/%.pb-c.h,$(PROTOS))
USER_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(USER_SRCS)) $(PROTO_OBJ)
PURE_OBJS := $(patsubst user/%.c,$(BUILD)/obj/%.o,$(PURE_SRCS)) $(PROTO_OBJ)
ASAN_OBJS := $(patsubst user/%.c,$(BUILD)/asan/%.o,$(PURE_SRCS)) $(PROTO_ASAN)
# Every object's header dependencies come from the compiler (-MMD -MP).
DEPS_FILES = $(shell find $(BUILD) -name '*.d' 2>/dev/null)

UNIT_SRCS  := $(wildcard tests/unit/*.c)
INTEG_SRCS := $(wildcard tests/integ/*.c)
FIXTURES   := $(BUILD)/fixtures/busy $(BUILD)/fixtures/libfixture.so $(BUILD)/fixtures/libfixture-stripped.so \
	$(BUILD)/fixtures/libunwind_fixture.so $(BUILD)/fixtures/debug/.done
ifndef CROSS
FIXTURES   += $(BUILD)/fixtures/layouts/.done
CRITERION_LIBS := -lcriterion
else
# A cross build's integration tests run in an arm64 guest (make
# kernel-test-arm64) and link Criterion from its root: libcriterion-dev
# cannot be installed for two architectures at once. Its headers are the host's.
GUEST_ROOT ?= /var/cache/pyebpf/kernels-arm64/$(ARM64_SUITE)/root
GUEST_LIBS := $(GUEST_ROOT)/usr/lib/aarch64-linux-gnu
# (A newer suite's libraries may need a newer glibc than the toolchain's: the guest has it.)
CRITERION_LIBS := -L$(GUEST_LIBS) -l:libcriterion.so.3 -Wl,-rpath-link,$(GUEST_LIBS) -Wl,--allow-shlib-undefined
# --native's C extension for the root's python3, where tests/integ/
# test_native.c looks for it (there is no compiler in the guest to build it).
GUEST_PY := $(notdir $(firstword $(wildcard $(GUEST_ROOT)/usr/include/python3.[0-9]*)))
GUEST_CEXT := $(BUILD)/fixtures/ext/usr_bin_$(GUEST_PY)/pyebpf_cext.cpython-$(subst .,,$(subst python,,$(GUEST_PY)))-aarch64-linux-gnu.so
FIXTURES   += $(GUEST_CEXT)
$(GUEST_CEXT): tests/fixtures/cext.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -fPIC -shared -I$(GUEST_ROOT)/usr/include/$(GUEST_PY) -idirafter $(GUEST_ROOT)/usr/include $< -o $@
endif

.PHONY: all clean install man deps test-deps vmlinux test check docs-check unit-test integ-test integ-check fuzz fuzz-smoke demo bench viewers backends \
	otel-python
.DELETE_ON_ERROR:

all: $(BUILD)/pyebpf

# What the integration tests run besides pyebpf.
.PHONY: fixtures
fixtures: $(FIXTURES)

# One BPF object file per program family (bpf/*.bpf.c), linked into one
# object for the skeleton; bpf/shared.bpf.h holds the maps they share.
BPF_PROGS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(wildcard bpf/*.bpf.c))

BPF_CC = $(CLANG) -g -O2 -Wall -Werror $(DEPFLAGS) -target bpf -D__TARGET_ARCH_$(ARCH) $(BPF_ARCH_FLAGS) \
	-I$(VMLINUX_DIR) -Iinclude -I.

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_DIR)/vmlinux.h
	@mkdir -p $(dir $@)
	$(call msg,CLANG-BPF ,$<)
	$(Q)$(BPF_CC) -c $< -o $@

$(BUILD)/sample.bpf.o: $(BPF_PROGS)
	$(call msg,BPF-LINK ,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(BUILD)/sample.skel.h: $(BUILD)/sample.bpf.o Makefile
	$(call msg,SKEL    ,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name sample_bpf > $@

# The same programs built for kernels that lack what the default build uses
# (bpf/kernel_compat.bpf.h): compat, before 5.17 (no bpf_loop); tw2, Linux
# 7.x (the task-work kfunc's new prototype). Each has the default's maps,
# programs and settings, so sample.skel.h drives it with its bytes
# (user/record/sampler.c); the build fails if their skeletons' layouts differ.
BPF_VARIANTS := compat tw2
# A skeleton's layout: its maps and programs as a set (the skeleton finds
# them by name), its settings and variables in order (they are memory).
skel_layout = { sed -n '/^struct $(2) {/,/^};/p' $(1) | sed '/__rodata {/,/\*bss;/d' | sort; \
	sed -n '/^struct $(2) {/,/^};/p' $(1) | sed -n '/__rodata {/,/\*bss;/p'; }
BPF_FLAGS_compat := -DPYEBPF_KERNEL_COMPAT
BPF_FLAGS_tw2 := -DPYEBPF_TASK_WORK_V2
define bpf_variant
$(BUILD)/bpf-$(1)/%.bpf.o: bpf/%.bpf.c $(VMLINUX_DIR)/vmlinux.h
	@mkdir -p $$(dir $$@)
	$$(call msg,CLANG-BPF ,$$< ($(1)))
	$$(Q)$$(BPF_CC) $$(BPF_FLAGS_$(1)) -c $$< -o $$@
$(BUILD)/sample-$(1).bpf.o: $(patsubst bpf/%.bpf.c,$(BUILD)/bpf-$(1)/%.bpf.o,$(wildcard bpf/*.bpf.c))
	$$(call msg,BPF-LINK ,$$@)
	$$(Q)$$(BPFTOOL) gen object $$@ $$^
$(BUILD)/sample_$(1).skel.h: $(BUILD)/sample-$(1).bpf.o $(BUILD)/sample.skel.h Makefile
	$$(call msg,SKEL    ,$$@)
	$$(Q)$$(BPFTOOL) gen skeleton $$< name sample_bpf_$(1) > $$@.tmp
	$$(Q)$$(call skel_layout,$(BUILD)/sample.skel.h,sample_bpf) > $$@.want
	$$(Q)$$(call skel_layout,$$@.tmp,sample_bpf_$(1)) | sed 's/sample_bpf_$(1)/sample_bpf/g' | diff -u $$@.want - || \
		{ echo "bpf: the $(1) build's maps, programs or settings differ from the default build's"; exit 1; }
	$$(Q)mv $$@.tmp $$@ && rm -f $$@.want
endef
$(foreach v,$(BPF_VARIANTS),$(eval $(call bpf_variant,$(v))))

$(BUILD)/profile.pb-c.c $(BUILD)/profile.pb-c.h: user/read/profile.proto | $(BUILD)
	$(call msg,PROTOC  ,$<)
	$(Q)protoc-c --c_out=$(BUILD) --proto_path=user/read $<
$(BUILD)/%.pb-c.c $(BUILD)/%.pb-c.h: user/push/%.proto | $(BUILD)
	$(call msg,PROTOC  ,$<)
	$(Q)protoc-c --c_out=$(BUILD) --proto_path=user/push $<

# The flame graph's script and serve's page, embedded as C strings (sed only: no xxd needed).
embed = $(Q){ echo 'static const char $(1)[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $(2); echo ';'; } > $(3)
$(BUILD)/flamegraph_js.h: user/write/flamegraph.js | $(BUILD)
	$(call msg,GEN     ,$@)
	$(call embed,flamegraph_js,$<,$@)
$(BUILD)/serve_page.h: user/serve/serve_page.html | $(BUILD)
	$(call msg,GEN     ,$@)
	$(call embed,serve_page,$<,$@)

$(BUILD)/obj/%.pb-c.o: $(BUILD)/%.pb-c.c
	@mkdir -p $(dir $@)
	$(call msg,CC      ,$<)
	$(Q)$(CC) $(CFLAGS) -w $(CPPFLAGS) -c $< -o $@

$(BUILD)/asan/%.pb-c.o: $(BUILD)/%.pb-c.c
	@mkdir -p $(dir $@)
	$(call msg,CC-SAN  ,$<)
	$(Q)$(CC) -O1 -g $(SAN) -w $(CPPFLAGS) -c $< -o $@

# Generated headers first (order-only); after that the .d files say who needs what.
GENERATED := $(BUILD)/commit.h $(BUILD)/sample.skel.h $(foreach v,$(BPF_VARIANTS),$(BUILD)/sample_$(v).skel.h) $(PROTO_HDRS) $(BUILD)/flamegraph_js.h $(BUILD)/serve_page.h

$(BUILD)/obj/%.o: user/%.c | $(GENERATED)
	@mkdir -p $(dir $@)
	$(call msg,CC      ,$<)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(DEPFLAGS) $(CPPFLAGS) -c $< -o $@

$(BUILD)/asan/%.o: user/%.c | $(PROTO_HDRS) $(BUILD)/flamegraph_js.h $(BUILD)/serve_page.h
	@mkdir -p $(dir $@)
	$(call msg,CC-SAN  ,$<)
	$(Q)$(CC) -O1 -g $(SAN) $(WARN) $(DEPFLAGS) $(CPPFLAGS) -c $< -o $@

$(BUILD)/pyebpf: $(USER_OBJS) $(BUILD)/libbpf-api.o
	$(call msg,LD      ,$@)
	$(Q)test -e $(STATIC_LIBS)/.stamp || { echo "pyebpf: no static libcurl in $(STATIC_LIBS): make deps$(if $(CROSS), ARCH=$(ARCH))"; exit 1; }
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ -o $@ $(LDLIBS) 2>$@.ld || { cat $@.ld; exit 1; }
	$(Q)bash .ci/static-link-check.sh $@.ld || { rm -f $@; exit 1; }
	$(Q)rm -f $@.ld

# libbpf's static archive exports its internal helpers too (hashmap__new,
# strset__add_str, kernel_supports...), which collide with ours: linked
# into one object with only its API (bpf_*, btf_*, libbpf_*, the buffers')
# left global.
LIBBPF_A := /usr/lib/$(shell $(CC) -dumpmachine)/libbpf.a
$(BUILD)/libbpf-api.o: $(LIBBPF_A) | $(BUILD)
	$(call msg,LIBBPF  ,$@)
	$(Q)$(CROSS)ld -r --whole-archive $< -o $@.tmp
	$(Q)$(OBJCOPY) --wildcard $(foreach p,bpf_ btf_ btf__ libbpf_ perf_buffer__ ring_buffer__ ring__ user_ring_buffer__,-G '$(p)*') \
		$@.tmp $@ && rm -f $@.tmp

# The commit built, for --version: rewritten only when it changes.
$(BUILD)/commit.h: FORCE | $(BUILD)
	$(Q)c=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	git diff --quiet HEAD -- 2>/dev/null || c="$$c-dirty"; \
	echo "#define PYEBPF_COMMIT \"$$c\"" | cmp -s - $@ || echo "#define PYEBPF_COMMIT \"$$c\"" > $@
.PHONY: FORCE
FORCE:

$(BUILD):
	mkdir -p $@

# ---- tests ---------------------------------------------------------------
# bench/offcpu.sh's workloads; bench/replay.sh's replayer (below).
BENCH_BINS := $(BUILD)/bench/pingpong $(BUILD)/bench/sleepers $(BUILD)/bench/replay
$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -pthread $< -o $@
# bench/replay.sh's replayer: the ingest path alone, fed recorded samples.
$(BUILD)/bench/replay: bench/replay.c $(PURE_OBJS)
	@mkdir -p $(dir $@)
	$(call msg,CC      ,$<)
	$(Q)$(CC) $(CFLAGS) $(WARN) $(CPPFLAGS) $< $(PURE_OBJS) -o $@ $(LDLIBS)

$(BUILD)/fixtures/busy: tests/fixtures/busy.c
	@mkdir -p $(dir $@)
	$(CC) -O0 -g -fno-omit-frame-pointer -fno-inline $< -o $@

$(BUILD)/fixtures/libfixture.so: tests/fixtures/fixture.cc
	@mkdir -p $(dir $@)
	$(CXX) -O1 -g -fPIC -shared $< -o $@

# No frame pointers: only DWARF CFI unwinds it (tests/unit/test_unwind.c).
$(BUILD)/fixtures/libunwind_fixture.so: tests/fixtures/unwind_fixture.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fomit-frame-pointer -fPIC -shared $< -o $@

$(BUILD)/fixtures/libfixture-stripped.so: $(BUILD)/fixtures/libfixture.so
	$(STRIP) --strip-all $< -o $@

# libfixture.so's detached debug file where Debian's -dbg packages put theirs
# (debug/.build-id/ab/cdef....debug), and in debug-other another file's
# debug file under the same name: a build id that does not match.
$(BUILD)/fixtures/debug/.done: $(BUILD)/fixtures/libfixture.so $(BUILD)/fixtures/libunwind_fixture.so
	id=$$(readelf -n $< | sed -n 's/.*Build ID: //p'); test -n "$$id" || exit 1; \
	for d in debug debug-other; do mkdir -p $(BUILD)/fixtures/$$d/.build-id/$${id%$${id#??}}; done; \
	$(OBJCOPY) --only-keep-debug $< $(BUILD)/fixtures/debug/.build-id/$${id%$${id#??}}/$${id#??}.debug; \
	$(OBJCOPY) --only-keep-debug $(BUILD)/fixtures/libunwind_fixture.so \
		$(BUILD)/fixtures/debug-other/.build-id/$${id%$${id#??}}/$${id#??}.debug
	touch $@

# What each CPython 3.13+'s own headers say of its layout (tests/unit/test_offsets.c).
$(BUILD)/fixtures/layouts/.done: tests/fixtures/layout_probe.c tests/fixtures/layout_probes.sh user/python/debug_offsets.h
	bash tests/fixtures/layout_probes.sh $(BUILD)/fixtures/layouts $(PYTHONS_DIR)
	touch $@

# Unit tests: pure code under AddressSanitizer and UBSan.
# One binary each, compiled in one go: -MMD writes the headers of every test
# source (tests/pythons.h, tests/unit/dwarf.h, ...) into the binary's .d file.
$(BUILD)/unit-tests: $(UNIT_SRCS) $(ASAN_OBJS)
	$(call msg,LD      ,$@)
	$(Q)$(CC) -O1 -g $(SAN) $(WARN) $(CPPFLAGS) $(UNIT_SRCS) $(ASAN_OBJS) -o $@ -lcriterion -ldw -lelf -lz -lprotobuf-c -lstdc++ -ldl -lpthread -lm
	$(Q)$(CC) $(CPPFLAGS) -MM -MP -MT $@ $(UNIT_SRCS) > $@.d

$(BUILD)/integ-tests: $(INTEG_SRCS)
	$(call msg,LD      ,$@)
	$(Q)$(CC) -O1 -g $(WARN) $(CPPFLAGS) $(INTEG_SRCS) -o $@ $(CRITERION_LIBS)
	$(Q)$(CC) $(CPPFLAGS) -MM -MP -MT $@ $(INTEG_SRCS) > $@.d

# Fuzz targets under libFuzzer, ASan and UBSan, from committed seeds, each for
# a bounded time (FUZZ_SECONDS); a crash or sanitizer report fails `make fuzz`.
# pprof: the reader of `report` (files pyebpf did not write) and every writer.
# ingest: raw ring-buffer records through the decoder, the symbolizers
# (this process's own maps, /proc/kallsyms) and --native unwinding.
FUZZ_CFLAGS := -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(WARN) $(CPPFLAGS)
FUZZ_PPROF_SRCS := tests/fuzz/fuzz_pprof.c user/read/pprof.c user/read/pprof_cost.c user/profile/profile.c user/base/strtab.c user/base/hashmap.c user/base/util.c \
	user/base/gzip.c user/profile/frame_format.c user/write/top.c user/write/flamegraph.c user/write/folded.c \
	user/write/trace.c user/base/escape.c user/write/process_frame.c \
	user/write/thread_names.c user/profile/offcpu.c user/python/asyncio_tasks.c
FUZZ_INGEST_SRCS := tests/fuzz/fuzz_ingest.c $(PURE_SRCS)
# names: interval file names, the text escaper, id lists, --since/--until times,
# /etc/passwd and /etc/group, container runtimes' state files.
FUZZ_NAMES_SRCS := tests/fuzz/fuzz_names.c user/archive/rotation.c user/base/escape.c user/base/util.c user/base/wallclock.c \
	user/system/accounts.c user/system/target_fs.c user/system/json_field.c user/system/runtime_state.c
# asyncio: a target's memory through the walk's page cache and the task walker.
FUZZ_ASYNCIO_SRCS := tests/fuzz/fuzz_asyncio.c user/python/asyncio_tasks.c user/python/page_cache.c user/base/util.c
# values: what BPF copies of a request's labels (a value, a span's name and ids).
FUZZ_VALUES_SRCS := tests/fuzz/fuzz_values.c user/python/value_label.c user/python/otel_ids.c user/python/offsets.c \
	user/base/util.c
FUZZ_SECONDS ?= 30
# One seed by default: a run goes the same way everywhere, so what fails in
# CI fails here too. FUZZ_SEED=0 (libFuzzer picks one) to explore further.
FUZZ_SEED ?= 1

$(BUILD)/fuzz-pprof: $(FUZZ_PPROF_SRCS) $(PROTO_OBJ) | $(PROTO_HDRS) $(BUILD)/flamegraph_js.h $(BUILD)/serve_page.h
	$(call msg,LD      ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(FUZZ_PPROF_SRCS) $(PROTO_OBJ) -o $@ -lprotobuf-c -lz
	$(Q)$(CC) $(CPPFLAGS) -MM -MP -MT $@ $(FUZZ_PPROF_SRCS) > $@.d

$(BUILD)/fuzz-ingest: $(FUZZ_INGEST_SRCS) $(PROTO_OBJ) | $(PROTO_HDRS) $(BUILD)/flamegraph_js.h $(BUILD)/serve_page.h
	$(call msg,LD      ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(FUZZ_INGEST_SRCS) $(PROTO_OBJ) -o $@ -ldw -lelf -lz -lprotobuf-c -lstdc++
	$(Q)$(CC) $(CPPFLAGS) -MM -MP -MT $@ $(FUZZ_INGEST_SRCS) > $@.d

$(BUILD)/fuzz-asyncio: $(FUZZ_ASYNCIO_SRCS)
	$(call msg,LD      ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(FUZZ_ASYNCIO_SRCS) -o $@
	$(Q)$(CC) $(CPPFLAGS) -MM -MP -MT $@ $(FUZZ_ASYNCIO_SRCS) > $@.d

# push: a backend's answer, the spool's journal, URLs, labels, cgroup paths.
FUZZ_PUSH_SRCS := tests/fuzz/fuzz_push.c user/push/journal.c user/push/otlp_req.c user/push/series.c \
	user/push/endpoint.c user/system/cgroups.c user/archive/rotation.c user/base/hashmap.c user/base/strtab.c user/base/util.c user/profile/profile.c \
	user/profile/frame_format.c user/base/gzip.c user/profile/offcpu.c
$(BUILD)/fuzz-push: $(FUZZ_PUSH_SRCS) $(PROTO_OBJ) | $(PROTO_HDRS)
	$(call msg,LD      ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(FUZZ_PUSH_SRCS) $(PROTO_OBJ) -o $@ -lprotobuf-c -lz
	$(Q)$(CC) $(CPPFLAGS) -MM -MP -MT $@ $(FUZZ_PUSH_SRCS) > $@.d

$(BUILD)/fuzz-values: $(FUZZ_VALUES_SRCS)
	$(call msg,LD      ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(FUZZ_VALUES_SRCS) -o $@
	$(Q)$(CC) $(CPPFLAGS) -MM -MP -MT $@ $(FUZZ_VALUES_SRCS) > $@.d

$(BUILD)/fuzz-names: $(FUZZ_NAMES_SRCS)
	$(call msg,LD      ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $(FUZZ_NAMES_SRCS) -o $@
	$(Q)$(CC) $(CPPFLAGS) -MM -MP -MT $@ $(FUZZ_NAMES_SRCS) > $@.d

# $(call run_fuzz,NAME,RSS_MB): run build/fuzz-NAME over tests/fuzz/seeds-NAME,
# failing on any input that takes more than RSS_MB of memory (sanitizers' own
# overhead included). A failure prints the input that failed, in base64, so
# that one seen only in CI can be replayed (base64 -d > x; build/fuzz-NAME x).
fuzz_artifacts = fuzz-$(1)-crash-* fuzz-$(1)-leak-* fuzz-$(1)-timeout-* fuzz-$(1)-oom-*
define run_fuzz
	mkdir -p $(BUILD)/fuzz-corpus-$(1)
	cd $(BUILD) && rm -f $(call fuzz_artifacts,$(1)) && { ./fuzz-$(1) -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
		-rss_limit_mb=$(2) -seed=$(FUZZ_SEED) -artifact_prefix=fuzz-$(1)- -print_final_stats=1 \
		fuzz-corpus-$(1) ../tests/fuzz/seeds-$(1) > fuzz-$(1).log 2>&1 || \
		{ tail -n 60 fuzz-$(1).log; for a in $(call fuzz_artifacts,$(1)); do [ -f "$$a" ] && \
		echo "fuzz: $$a (base64): $$(head -c 65536 "$$a" | base64 -w0)"; done; \
		echo "fuzz: $(1) failed (build/fuzz-$(1).log)"; exit 1; }; }
	@grep -E '^(Done|stat::(number_of_executed_units|new_units_added|peak_rss_mb))' $(BUILD)/fuzz-$(1).log
endef

fuzz: $(BUILD)/fuzz-pprof $(BUILD)/fuzz-ingest $(BUILD)/fuzz-names $(BUILD)/fuzz-asyncio $(BUILD)/fuzz-push $(BUILD)/fuzz-values
	$(call run_fuzz,pprof,512)
	$(call run_fuzz,ingest,2048)
	$(call run_fuzz,names,2048)
	$(call run_fuzz,asyncio,512)
	$(call run_fuzz,push,512)
	$(call run_fuzz,values,512)

# One job: with --jobs 2 Criterion's own runner leaks a 48-byte buffer now and
# then (inside libcriterion.so), which LeakSanitizer reports; one job is no
# slower here (7.5 s).
unit-test: $(BUILD)/unit-tests $(FIXTURES)
	cd $(BUILD) && ASAN_OPTIONS=detect_leaks=1 ./unit-tests --jobs 1

# The backends the push tests send to, built once from the Go module proxy
# into /var/cache/pyebpf/backends (tests/backends/): an OpenTelemetry
# Collector, and a Pyroscope stand-in on Pyroscope's own API module.
backends:
	bash tests/backends/pyroscope.sh build >/dev/null
	bash tests/backends/otelcol.sh build >/dev/null

# Integration tests run the real binary with real BPF: root, one at a time.
# Verbose: each test's time and what it measured are in the log, and the
# slowest 15 are named at the end, for whoever must cut CI's time.
integ-test: $(BUILD)/pyebpf $(BUILD)/integ-tests $(FIXTURES) $(BUILD)/bench/replay backends
	cd $(BUILD) && { ./integ-tests --jobs 1 --verbose 2>&1; echo $$? > integ.rc; } | tee integ.log
	@sed -n 's/^\[PASS\] \(.*\): (\([0-9.]*\)s)$$/\2 \1/p' $(BUILD)/integ.log | sort -rn | head -n 15 | \
		sed 's/^/integ: slowest: /'
	@exit "$$(cat $(BUILD)/integ.rc)"

# The whole suite (the README's test command): every stage runs, then one
# counted line; make check is the short loop for editing (under 5 minutes).
# The fuzz stage at half its budget (FUZZ_SECONDS=15 a target, 30 by
# default): the seeds are fixed (FUZZ_SEED), so a run explores the same
# inputs' first half; make fuzz alone, or FUZZ_TEST_SECONDS=30, for all.
FUZZ_TEST_SECONDS ?= 15
test: test-deps
	FUZZ_SECONDS=$(FUZZ_TEST_SECONDS) ARM64_SUITES="$(ARM64_SUITE) $(ARM64_SIGNED_SUITE)" \
		bash tests/stages.sh unit-test docs-check fuzz integ-test dist-test kernel-test kernel-test-arm64

CHECK_INTEG ?= 'record/*' 'push/otlp*' 'errors/*' 'pprof/*'
check: test-deps
	bash tests/stages.sh unit-test docs-check fuzz-smoke integ-check

# Every relative link of README.md and docs/ resolves; every pyebpf command
# shown in a shell block still parses (tests/docs_check.py).
docs-check: $(BUILD)/pyebpf $(BUILD)/pyebpf.1
	python3 tests/docs_check.py $(BUILD)/pyebpf
	@groff -man -Tutf8 -ww $(BUILD)/pyebpf.1 2>&1 >/dev/null | { ! grep .; } || { echo "docs: the man page has roff warnings"; exit 1; }

fuzz-smoke:
	$(MAKE) fuzz FUZZ_SECONDS=5

integ-check: $(BUILD)/pyebpf $(BUILD)/integ-tests $(FIXTURES) $(BUILD)/bench/replay backends
	cd $(BUILD) && for f in $(CHECK_INTEG); do ./integ-tests --jobs 1 --filter "$$f" || exit 1; done

# ---- set-up ----------------------------------------------------------------
# What building and running pyebpf needs (make deps demo: about a minute on a
# fresh Debian 12), and what only the tests need (make test-deps: Go for
# go tool pprof and the test backends, Chromium, the linters, the real-world
# Python frameworks, libFuzzer's runtime, QEMU's kernels' helpers, the
# CPythons beyond Debian's, a free-threaded one built from source, and
# OpenTelemetry Python in their venvs).
DEPS := make clang llvm gcc g++ libbpf-dev bpftool libelf-dev zlib1g-dev libdw-dev \
	libprotobuf-c-dev protobuf-c-compiler libmicrohttpd-dev libcurl4-openssl-dev libncurses-dev \
	libssl-dev libc-ares-dev liblzma-dev libbz2-dev dpkg-dev \
	pkg-config python3 binutils procps util-linux curl
TEST_DEPS := pybind11-dev python3-dev libc6-dbg python3-numpy python3-scipy libopenblas0-pthread \
	python3-flask gunicorn python3-aiohttp python3-sphinx graphviz libcriterion-dev bc golang-go \
	libclang-rt-14-dev chromium patchelf clang-format clang-tidy cppcheck shellcheck linux-perf strace \
	tmux nginx-light openssl groff-base debhelper lintian python3-venv file ca-certificates \
	mmdebstrap docker.io skopeo podman

# make deps ARCH=arm64 on an x86-64 machine: the cross toolchain and the
# arm64 libraries beside the host's (Debian's multiarch; clang, bpftool and
# protoc-c stay the host's). Installing an arm64 library brings its amd64
# twin to the same version.
CROSS_DEPS := gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross libbpf-dev:arm64 \
	libelf-dev:arm64 zlib1g-dev:arm64 libdw-dev:arm64 libprotobuf-c-dev:arm64 libmicrohttpd-dev:arm64 \
	libcurl4-openssl-dev:arm64 libncurses-dev:arm64 libssl-dev:arm64 libc-ares-dev:arm64 liblzma-dev:arm64 \
	libbz2-dev:arm64

# Downloads from the archive are tried again with backoff (.ci/retry.sh): the
# mirror fails one now and then, and the last line names the one that failed.
RETRY := . .ci/retry.sh && retry
deps:
	$(if $(CROSS),dpkg --add-architecture arm64)
	$(RETRY) "apt-get update" apt-get update -qq
	$(RETRY) "apt-get install (make deps$(if $(CROSS), ARCH=$(ARCH)))" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends $(DEPS) $(if $(CROSS),$(CROSS_DEPS))
	bash .ci/static-libs.sh $(ARCH) $(STATIC_LIBS)

# The arm64 guest of make test builds with the cross toolchain.
test-deps: deps
	$(RETRY) "apt-get install (make test-deps)" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends $(TEST_DEPS)
	$(if $(filter x86,$(HOST_ARCH)),$(MAKE) deps ARCH=arm64)
	bash .ci/pythons.sh $(PYTHONS_DIR)
	$(MAKE) --no-print-directory otel-python

# OpenTelemetry Python and Flask from PyPI, pinned, in a venv per interpreter
# (Debian's 3.11, pyenv's 3.10, 3.12, 3.13, sid's 3.14: after pythons.sh),
# and FastAPI on uvicorn in one more for sid's 3.14, under
# /var/cache/pyebpf/otel-python, for the traced services the span tests
# profile (tests/fixtures/otel/): ~55 s once, under a second cached.
otel-python:
	bash tests/backends/otel-python.sh build >/dev/null

# The kernel's types for the BPF programs: this machine's; for a cross
# build, those of Debian sid's arm64 kernel, taken from its image.
vmlinux:
ifeq ($(ARCH),$(HOST_ARCH))
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX_DIR)/vmlinux.h
else
	KERNEL_ARCH=$(ARCH) KERNEL_SUITES=sid bash .ci/kernels/fetch.sh
	@mkdir -p $(BUILD)
	$(PYTHON) .ci/kernels/btf-from-image.py /var/cache/pyebpf/kernels-$(ARCH)/sid/vmlinuz $(BUILD)/vmlinux.btf
	$(BPFTOOL) btf dump file $(BUILD)/vmlinux.btf format c > $(VMLINUX_DIR)/vmlinux.h
endif

install: $(BUILD)/pyebpf $(BUILD)/pyebpf.1
	install -D -m 0755 $(BUILD)/pyebpf $(DESTDIR)/usr/local/bin/pyebpf
	install -D -m 0644 $(BUILD)/pyebpf.1 $(DESTDIR)/usr/local/share/man/man1/pyebpf.1

# pyebpf(1), from the binary's own help (docs/man.sh).
man: $(BUILD)/pyebpf.1
$(BUILD)/pyebpf.1: $(BUILD)/pyebpf docs/man.sh
	$(call msg,MAN     ,$@)
	$(Q)bash docs/man.sh $(BUILD)/pyebpf > $@.tmp && mv $@.tmp $@

# Profile the bundled demo system-wide for as long as it runs.
demo: $(BUILD)/pyebpf
	$(BUILD)/pyebpf record -a -o pyebpf-demo.pb.gz -- $(PYTHON) bench/demo.py
	$(BUILD)/pyebpf report pyebpf-demo.pb.gz -o pyebpf-demo.svg
	$(BUILD)/pyebpf report pyebpf-demo.pb.gz --top 10
	@echo "recording: $(CURDIR)/pyebpf-demo.pb.gz; flame graph: $(CURDIR)/pyebpf-demo.svg (open it in a browser)"

# The outputs in real viewers (go tool pprof, speedscope, the SVG) through
# headless Chromium: checks and screenshots in build/viewers/.
viewers: $(BUILD)/pyebpf
	bash tests/viewers.sh $(BUILD)/viewers

# C, Python, and Python with --native; Python under the pyenv 3.12 build when there is one.
BENCH_PYTHON ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) python3)
bench: $(BUILD)/pyebpf $(FIXTURES) $(BENCH_BINS)
	bash bench/overhead.sh 7 c
	PYTHON=$(BENCH_PYTHON) bash bench/overhead.sh 7 python
	PYTHON=$(BENCH_PYTHON) bash bench/overhead.sh 7 native
	bash bench/offcpu.sh 7
	PYTHON=$(BENCH_PYTHON) bash bench/replay.sh 10 all
	PYTHON=$(BENCH_PYTHON) bash bench/bpfcost.sh 3 5
	bash bench/asyncio.sh 3 1000 8

clean:
	rm -rf $(BUILD)

-include $(DEPS_FILES)

# ---- dist ------------------------------------------------------------------
# What users install, for x86-64 and arm64 (arm64 cross-built), in dist/:
# the static binary, stripped; a wheel whose script it is (as py-spy ships
# its own); a .deb made by debhelper from deploy/debian/; one OCI image
# layout with both platforms, the binary and CA certificates alone. Built
# in dist.new/, checked (deploy/dist/check.sh), then moved into place.
VERSION := $(shell sed -n 's/^\#define PYEBPF_VERSION "\(.*\)"/\1/p' user/base/version.h)
DIST ?= dist
.PHONY: dist dist-test
dist: $(BUILD)/pyebpf $(BUILD)/pyebpf.1
	$(if $(filter x86,$(HOST_ARCH)),,$(error make dist runs on x86-64: it cross-builds arm64))
	$(MAKE) --no-print-directory ARCH=arm64 build-arm64/pyebpf
	rm -rf $(DIST).new && mkdir -p $(DIST).new
	strip --remove-section=.comment -o $(DIST).new/pyebpf-$(VERSION)-linux-x86_64 $(BUILD)/pyebpf
	aarch64-linux-gnu-strip --remove-section=.comment -o $(DIST).new/pyebpf-$(VERSION)-linux-aarch64 build-arm64/pyebpf
	for m in x86_64:amd64 aarch64:arm64; do \
		bin=$(DIST).new/pyebpf-$(VERSION)-linux-$${m%%:*}; \
		bash deploy/dist/wheel.sh $$bin $(VERSION) $${m%%:*} $(DIST).new && \
		bash deploy/dist/deb.sh $$bin $(BUILD)/pyebpf.1 $(VERSION) $${m##*:} $(DIST).new || exit 1; \
	done
	python3 deploy/dist/oci.py --version $(VERSION) --bin amd64=$(DIST).new/pyebpf-$(VERSION)-linux-x86_64 \
		--bin arm64=$(DIST).new/pyebpf-$(VERSION)-linux-aarch64 --ca-bundle /etc/ssl/certs/ca-certificates.crt \
		-o $(DIST).new/pyebpf-$(VERSION)-oci.tar
	bash deploy/dist/check.sh $(DIST).new $(VERSION)
	rm -rf $(DIST) && mv $(DIST).new $(DIST)
	@ls -l $(DIST)

# The shipped files as users get them (tests/dist/run.sh): the static
# binary in bare bullseye and trixie roots, the .deb there, the wheel in
# pyenv's 3.8 and sid's 3.15 venvs, the OCI image in a private engine with
# the DaemonSet's security context, pushing to both backends.
dist-test: dist backends
	bash tests/dist/run.sh $(DIST) $(VERSION)

# ---- style -----------------------------------------------------------------
FORMAT_FILES = $(shell git ls-files 'bpf/*.c' 'bpf/*.h' 'user/*.c' 'user/*.h' 'user/**/*.c' 'user/**/*.h' \
	'include/*.h' 'tests/*.h' 'tests/**/*.c' 'tests/**/*.h' 'tests/**/*.cc' ':!bpf/arm64/vmlinux.h')
.PHONY: format lint
format:
	clang-format -i $(FORMAT_FILES)

# clang-format, clang-tidy and cppcheck, as CI runs them (after a build).
lint: $(BUILD)/pyebpf
	bash .ci/lint

# ---- kernel matrix ---------------------------------------------------------
# Debian's cloud kernels (bullseye, bookworm, trixie, sid) under QEMU/TCG with
# this machine's root shared read-only (.ci/kernels/): KERNEL_CMD runs as root
# in each guest, in this directory. Logs in build/kernels/SUITE.log; one line
# per kernel at the end, then what each failing guest said; fails if any guest's command did.
KERNELS    ?= bullseye bookworm trixie sid
KERNEL_CMD ?= uname -r
.PHONY: kernels kernel-test
# The kernel-dependent integration tests in every guest (the CI's matrix).
kernel-test: $(BUILD)/pyebpf $(BUILD)/integ-tests $(FIXTURES)
	$(MAKE) kernels KERNEL_CMD="bash .ci/kernels/guest-tests.sh"

# An arm64 guest: Debian's arm64 cloud kernel of suite $(1) under
# qemu-system-aarch64 with that suite's arm64 root (fetch.sh), running
# guest-tests.sh's arm64 list (or the tests $(2) names) against the cross
# build in build-arm64/.
define arm64_guest
	KERNEL_ARCH=arm64 KERNEL_SUITES=$(1) bash .ci/kernels/fetch.sh
	$(MAKE) -j2 ARCH=arm64 ARM64_SUITE=$(1) build-arm64/pyebpf build-arm64/integ-tests fixtures
	PYEBPF_GUEST_TESTS="$(2)" KERNEL_ARCH=arm64 KERNEL_SUITES=$(1) $(MAKE) ARCH=arm64 kernels KERNELS=$(1) \
		KERNEL_CMD="bash .ci/kernels/guest-tests.sh"
endef

# ARM64_SUITE's guest, then ARM64_SIGNED_SUITE's for --native alone.
.PHONY: kernel-test-arm64
kernel-test-arm64:
	$(call arm64_guest,$(ARM64_SUITE),)
	$(if $(ARM64_SIGNED_SUITE),$(call arm64_guest,$(ARM64_SIGNED_SUITE),native/python_c_python_c_every_layer_in_order))

kernels:
	bash .ci/kernels/fetch.sh
	@mkdir -p $(BUILD)/kernels; \
	for s in $(KERNELS); do \
		echo "== kernel $$s: $(KERNEL_CMD)"; \
		{ bash .ci/kernels/run.sh $$s -- $(KERNEL_CMD); rc=$$?; \
		  if [ $$rc = 125 ]; then echo "== kernel $$s did not boot: once more"; \
		    bash .ci/kernels/run.sh $$s -- $(KERNEL_CMD); rc=$$?; fi; \
		  if [ $$rc = 126 ]; then echo "== kernel $$s oopsed (the guest kernel, not a test): once more"; \
		    bash .ci/kernels/run.sh $$s -- $(KERNEL_CMD); rc=$$?; fi; \
		  echo $$rc > $(BUILD)/kernels/$$s.rc; } 2>&1 | tee $(BUILD)/kernels/$$s.log; \
	done; \
	fail=0; for s in $(KERNELS); do \
		rc=$$(cat $(BUILD)/kernels/$$s.rc); [ "$$rc" = 0 ] || fail=1; \
		rel=$$(sed -n 's/.*PYEBPF-GUEST-KERNEL=\([^ ]*\).*/\1/p' $(BUILD)/kernels/$$s.log | tail -n1); \
		printf 'kernel %-9s %-28s exit %s\n' $$s "$${rel:-(did not boot)}" $$rc; \
	done; \
	for s in $(KERNELS); do \
		[ "$$(cat $(BUILD)/kernels/$$s.rc)" = 0 ] && continue; \
		echo "== kernel $$s failed:"; grep -a '^guest-tests:\|^run.sh:' $(BUILD)/kernels/$$s.log | tail -n 40; \
	done; exit $$fail
