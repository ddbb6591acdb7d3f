/* fuzz.h: what every harness under tests/fuzz/ shares.
 *
 * A harness is tests/fuzz/fuzz_NAME.c defining LLVMFuzzerTestOneInput: it hands the bytes to
 * one of xpool's parsers exactly as the program would (a file's text, a tool's output, an HTTP
 * body) and frees what came back. It must not print: libFuzzer runs it millions of times.
 *
 * The same file is built two ways (Makefile): with clang and -fsanitize=fuzzer into
 * build/fuzz/fuzz/fuzz_NAME for `make fuzz`, and with the normal compiler and fuzz_main.c into
 * $(B)/fuzz/fuzz_NAME, which `make check` runs on every input under tests/fuzz/regress/NAME/
 * (crashes found once, kept so they stay fixed) and on the seeds.
 *
 * Seeds: one line per harness in tests/fuzz/seeds.txt, "NAME GLOB...", globs relative to the
 * tree (tests/fixtures/...). */
#ifndef XP_FUZZ_H
#define XP_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The entry point libFuzzer (or fuzz_main.c) calls with one input; returns 0. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of data (parsers take C strings): caller frees; never NULL (aborts on
 * out of memory, which libFuzzer reports). Bytes after an embedded NUL are kept but unseen by
 * string parsers, as they would be in a file read by xp_read_file. */
char *xp_fuzz_str(const uint8_t *data, size_t size);

/* Writes data to a fresh file in a private temporary directory and returns its path (for
 * parsers that take a path: hwloc XML, manifests with includes); the file is removed by the
 * next call or by xp_fuzz_tmp_done. */
const char *xp_fuzz_tmpfile(const uint8_t *data, size_t size, const char *name);
/* Removes the temporary file and directory xp_fuzz_tmpfile made (atexit does this too). */
void xp_fuzz_tmp_done(void);

#endif
