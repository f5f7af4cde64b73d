# gitpack build.
#
#   make                  build ./gitpack (and t/helper/test-tool)
#   make DEVELOPER=1      warnings are errors (CI uses this)
#   make SANITIZE=address,undefined test
#                         the suite under ASan+UBSan
#   make test             the whole suite; ends with "N passed, N failed"
#   make demo             install missing deps, build, run the main job
#   make fuzz             build libFuzzer targets (clang) in t/fuzz/
#   make check-headers    compile each header alone
#
# Knobs (also settable in config.mak, or found by ./configure, which
# writes config.mak.autogen): NO_LIBDEFLATE=1, NO_STATIC_CRYPTO=1,
# NO_STATIC_ZLIB=1, NO_STATIC=1 (gitpack linked with the shared glibc), CC,
# CFLAGS, LDFLAGS,
# GP_TEST_JOBS (parallel test scripts).

CC ?= cc
CFLAGS ?= -O2 -g
LDFLAGS ?=
PROVE_JOBS ?= 2

-include config.mak.autogen
-include config.mak

# cc_accepts FLAG: FLAG when $(CC) compiles with it (gcc's -Wshadow=local
# is unknown to clang, whose -Wshadow is broader than the house wants).
cc_accepts = $(shell printf 'int main(void){return 0;}\n' | \
	$(CC) -Werror $(1) -x c - -o /dev/null >/dev/null 2>&1 && echo $(1))

WARNINGS = -Wall -Wextra -Wvla -Wsign-compare -Wno-unused-parameter \
	   -Wno-missing-field-initializers $(call cc_accepts,-Wshadow=local)
ifdef DEVELOPER
WARNINGS += -Werror -Wstrict-prototypes -Wmissing-prototypes
endif

BASIC_CFLAGS = -std=gnu11 -pthread -I. $(WARNINGS) -D_FILE_OFFSET_BITS=64
LIBS = -lssl -lcrypto -lcrypt -lz -lpthread -lm

ifndef NO_LIBDEFLATE
HAVE_LIBDEFLATE := $(shell printf '\043include <libdeflate.h>\nint main(void){return 0;}\n' | \
	$(CC) -x c - -o /dev/null -ldeflate >/dev/null 2>&1 && echo yes)
ifeq ($(HAVE_LIBDEFLATE),yes)
BASIC_CFLAGS += -DHAVE_LIBDEFLATE
LIBS := -ldeflate $(LIBS)
endif
endif

# libcrypto is linked statically when its archive is installed (Debian's
# libssl-dev ships it). gitpack only calls its SHA-1 and SHA-256 block
# functions, but loading and relocating the shared library costs about
# 1.5 ms per process, which a server pays on every request and which is
# half the time of a small bitmap query. NO_STATIC_CRYPTO=1 links it
# dynamically.
ifndef NO_STATIC_CRYPTO
LIBCRYPTO_A := $(shell $(CC) -print-file-name=libcrypto.a)
ifneq ($(wildcard $(LIBCRYPTO_A)),)
LIBS := $(subst -lcrypto,$(LIBCRYPTO_A),$(LIBS))
endif
LIBSSL_A := $(shell $(CC) -print-file-name=libssl.a)
ifneq ($(wildcard $(LIBSSL_A)),)
LIBS := $(subst -lssl,$(LIBSSL_A),$(LIBS))
endif
endif

# zlib and libdeflate likewise, when their archives are installed: each
# shared library mapped at start-up costs a process about 0.05 ms, which
# is a tenth of what a no-op fetch costs the server. NO_STATIC_ZLIB=1
# links them dynamically.
ifndef NO_STATIC_ZLIB
LIBZ_A := $(shell $(CC) -print-file-name=libz.a)
ifneq ($(wildcard $(LIBZ_A)),)
LIBS := $(subst -lz,$(LIBZ_A),$(LIBS))
endif
LIBDEFLATE_A := $(shell $(CC) -print-file-name=libdeflate.a)
ifneq ($(wildcard $(LIBDEFLATE_A)),)
LIBS := $(subst -ldeflate,$(LIBDEFLATE_A),$(LIBS))
endif
endif

# gitpack itself is linked statically, glibc included, as a position-
# independent executable (so ASLR still applies) when the toolchain can:
# ld.so mapping and relocating libc and libm costs a process about
# 0.15 ms, a seventh of what a no-op fetch costs the server. Two glibc
# calls then load its NSS modules at run time, which must come from the
# same glibc version (the linker warns of it): getpwnam() for "~user/"
# in config paths and getaddrinfo() for a git:// remote. Build where you
# run, or NO_STATIC=1. Sanitizer builds are always dynamic.
ifndef NO_STATIC
ifndef SANITIZE
HAVE_STATIC_PIE := $(shell printf 'int main(void){return 0;}\n' | \
	$(CC) -x c - -static-pie -o /dev/null >/dev/null 2>&1 && echo yes)
ifeq ($(HAVE_STATIC_PIE),yes)
GITPACK_LDFLAGS = -static-pie
endif
endif
endif

ifdef SANITIZE
BASIC_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all -DGP_DEBUG
LDFLAGS += -fsanitize=$(SANITIZE)
endif
ifdef DEBUG
BASIC_CFLAGS += -DGP_DEBUG
endif

ALL_CFLAGS = $(BASIC_CFLAGS) $(CFLAGS)

LIB_SRC = $(filter-out gitpack.c,$(wildcard *.c)) $(wildcard ewah/*.c) $(wildcard server/*.c)
LIB_OBJ = $(LIB_SRC:.c=.o)
BUILTIN_SRC = $(wildcard builtin/*.c)
BUILTIN_OBJ = $(BUILTIN_SRC:.c=.o)
TEST_TOOL_SRC = $(wildcard t/helper/*.c)
TEST_TOOL_OBJ = $(TEST_TOOL_SRC:.c=.o)
BENCH_SRC = $(wildcard bench/*.c)
BENCH_BIN = $(BENCH_SRC:.c=)
HEADERS = $(wildcard *.h) $(wildcard ewah/*.h) $(wildcard server/*.h) $(wildcard builtin/*.h) \
	  $(wildcard t/helper/*.h)

# Rebuild everything when the flags change (e.g. SANITIZE toggled).
FLAGS_FILE = .build-flags
FLAGS_NOW = $(CC) $(ALL_CFLAGS) $(LDFLAGS) $(GITPACK_LDFLAGS) $(LIBS)
$(shell echo '$(FLAGS_NOW)' | cmp -s - $(FLAGS_FILE) || echo '$(FLAGS_NOW)' > $(FLAGS_FILE))
# make may have listed the directory before the line above created the
# file (a fresh tree): give it a rule so the pattern rules still apply.
$(FLAGS_FILE):
	@echo '$(FLAGS_NOW)' > $@

all: gitpack t/helper/test-tool $(BENCH_BIN)

%.o: %.c $(HEADERS) $(FLAGS_FILE)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

libgitpack.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $^

gitpack: gitpack.o $(BUILTIN_OBJ) libgitpack.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(GITPACK_LDFLAGS) -o $@ gitpack.o $(BUILTIN_OBJ) libgitpack.a $(LIBS)

t/helper/test-tool: $(TEST_TOOL_OBJ) libgitpack.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $(TEST_TOOL_OBJ) libgitpack.a $(LIBS)

bench/%: bench/%.c $(FLAGS_FILE)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $<

test: all
	@$(SHELL) t/run-tests.sh

demo:
	@$(SHELL) bench/demo.sh

comma := ,

# libFuzzer targets: one per parser, t/fuzz/fuzz-<format>.c.
FUZZ_SRC = $(wildcard t/fuzz/fuzz-*.c)
FUZZ_BIN = $(FUZZ_SRC:.c=)
FUZZ_CC ?= clang
FUZZ_FLAGS = -std=gnu11 -pthread -I. -g -O1 -DGP_DEBUG -DGP_FUZZ \
	     -fsanitize=fuzzer,address,undefined -D_FILE_OFFSET_BITS=64 \
	     $(filter -DHAVE_LIBDEFLATE,$(BASIC_CFLAGS))
# The library is compiled once for all targets (instrumented, not linked
# with the fuzzer's main), then each target links against it.
FUZZ_LIB_FLAGS = $(subst -fsanitize=fuzzer$(comma),-fsanitize=fuzzer-no-link$(comma),$(FUZZ_FLAGS))
FUZZ_LIB_OBJ = $(patsubst %.c,t/fuzz/obj/%.o,$(LIB_SRC))
FUZZ_LIB = t/fuzz/obj/libgitpack-fuzz.a
fuzz: $(FUZZ_BIN)
t/fuzz/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_LIB_FLAGS) -c -o $@ $<
$(FUZZ_LIB): $(FUZZ_LIB_OBJ)
	rm -f $@ && ar rcs $@ $(FUZZ_LIB_OBJ)
t/fuzz/fuzz-%: t/fuzz/fuzz-%.c $(FUZZ_LIB) $(HEADERS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_LIB) $(LIBS)
fuzz-run: fuzz
	@$(SHELL) t/fuzz/run.sh $(FUZZ_SECONDS)

# server/ files that, like ewah/, include nothing of gitpack's (the
# listeners that serve through the library, server/serve.c, do).
SERVER_SELF_CONTAINED = server/http.c server/http.h server/body.c server/body.h \
	server/git-request.c server/git-request.h

# Each header compiles on its own, and ewah/ and $(SERVER_SELF_CONTAINED)
# include nothing of gitpack's: a quoted include in ewah/ must name a file
# of ewah/, one in those server/ files another of those files.
check-headers:
	@for h in $(wildcard *.h) $(wildcard ewah/*.h) $(wildcard server/*.h); do \
		printf '#include "%s"\n' $$h | $(CC) $(BASIC_CFLAGS) -Werror -x c -fsyntax-only - || exit 1; \
	done; \
	bad=$$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' ewah/*.[ch] | \
		sort -u | while read -r inc; do \
		case "$$inc" in */*) echo "$$inc";; *) test -f "ewah/$$inc" || echo "$$inc";; esac; done); \
	if test -n "$$bad"; then echo "ewah/ must not include gitpack headers: $$bad"; exit 1; fi; \
	for f in $(SERVER_SELF_CONTAINED); do \
		bad=$$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' $$f | \
			sort -u | while read -r inc; do \
			case " $(SERVER_SELF_CONTAINED) " in *" server/$$inc "*) ;; *) echo "$$inc";; esac; done); \
		if test -n "$$bad"; then echo "$$f must not include gitpack headers: $$bad"; exit 1; fi; \
	done; \
	echo "headers ok"

clean:
	rm -f gitpack *.o builtin/*.o ewah/*.o server/*.o t/helper/*.o libgitpack.a \
		t/helper/test-tool $(BENCH_BIN) $(FUZZ_BIN) $(FLAGS_FILE)
	rm -rf t/trash* t/results t/fuzz/obj

.PHONY: all test demo fuzz fuzz-run check-headers clean
