/* jsonpull.h: a strict pull tokenizer for JSON text read in chunks (no document tree).
 *
 * The inventory decoder (model_json.c) walks a document with it and builds the model as it
 * goes, so memory follows the model, not the text: a file or a pipe is read 256 KiB at a
 * time. It is as strict as jansson with JSON_REJECT_DUPLICATES, which it replaces there:
 * RFC 8259 grammar only, UTF-8 checked, \u0000 refused (unless allowed), duplicate keys in
 * any object refused, nesting at most XP_JP_MAX_DEPTH, integers that do not fit 64 bits
 * and reals that overflow refused. Syntax errors read "LINE:COLUMN: message". */
#ifndef XP_JSONPULL_H
#define XP_JSONPULL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deepest nesting of arrays and objects (jansson's limit). */
#define XP_JP_MAX_DEPTH 2048
/* Longest string or key held (longer is a syntax error): far above every field's own limit. */
#define XP_JP_MAX_STR ((size_t)4 << 20)

/* What a value starts with. */
enum xp_jp_type {
	XP_JP_ERROR, /* a syntax error: msg says what and where */
	XP_JP_OBJECT,
	XP_JP_ARRAY,
	XP_JP_STRING,
	XP_JP_INTEGER,
	XP_JP_REAL,
	XP_JP_TRUE,
	XP_JP_FALSE,
	XP_JP_NULL
};

struct xp_jp_keys; /* the keys seen in each open object, for duplicates */

/* A reader of one document. Fields below are read-only to callers. */
struct xp_jp {
	int fd;                  /* source when >= 0, else mem */
	const unsigned char *mem;
	unsigned char *buf;      /* chunk buffer (fd sources) */
	const unsigned char *p, *end; /* unread bytes of the current chunk */
	bool eof;
	bool allow_nul;          /* \u0000 in strings and keys is kept (str_nul says so) */
	int line, col;           /* of the next byte */
	int depth;
	char *str;               /* the last string value (NUL-terminated; may hold NUL when allowed) */
	size_t str_len, str_cap;
	bool str_printable;      /* str is printable ASCII only (nothing for a checker to find) */
	char *key;               /* the last object key */
	size_t key_len, key_cap;
	int64_t ival;            /* the last integer */
	double dval;             /* the last number (integers too) */
	struct xp_jp_keys *keys; /* one set per depth */
	bool failed;
	char msg[200];           /* "LINE:COLUMN: message" after a syntax error */
};

/* Starts reading len bytes at text. */
void xp_jp_init_mem(struct xp_jp *jp, const char *text, size_t len);
/* Starts reading fd (not closed by the reader) in chunks. */
void xp_jp_init_fd(struct xp_jp *jp, int fd);
/* Frees the reader's buffers (not the fd). */
void xp_jp_free(struct xp_jp *jp);

/* Reads the start of the next value: a scalar is read whole (str, ival, dval); an object or
 * an array is entered, to be walked with xp_jp_next_key / xp_jp_next_elem. */
enum xp_jp_type xp_jp_value(struct xp_jp *jp);
/* In an object: 1 with the next key in key (its value comes next), 0 at the end, -1 on error. */
int xp_jp_next_key(struct xp_jp *jp);
/* As xp_jp_next_key without the duplicate check: for a caller that knows the object's keys
 * and checks its own (a bit a field), and calls xp_jp_key_check for any other key. */
int xp_jp_next_key_unchecked(struct xp_jp *jp);
/* Checks the key just read (xp_jp_next_key_unchecked) against the object's others; -1 on a duplicate. */
int xp_jp_key_check(struct xp_jp *jp);
/* Fails with "duplicate object key" for the key just read (a caller's own check found it). */
int xp_jp_key_dup(struct xp_jp *jp);
/* In an array: 1 when an element comes next, 0 at the end, -1 on error. */
int xp_jp_next_elem(struct xp_jp *jp);
/* Skips the rest of a value whose start xp_jp_value returned as t (checking it all); -1 on error. */
int xp_jp_skip(struct xp_jp *jp, enum xp_jp_type t);
/* After the top value: 0 when only white space follows, -1 (a syntax error) otherwise. */
int xp_jp_end(struct xp_jp *jp);
/* The top value: an object or an array, as jansson requires without JSON_DECODE_ANY. */
enum xp_jp_type xp_jp_top(struct xp_jp *jp);

#endif
