/* fakehost.h: what the adapter suites share: a fake xpool host (tools answered from rules, replay
 * files read from a directory), fixture text, raw nodes and scratch directories. Assertions inside
 * end the calling test, so these are for check suites only. */
#ifndef XP_FAKEHOST_H
#define XP_FAKEHOST_H

#include <stdbool.h>
#include <stddef.h>

#include "xp_adapter.h"

/* What a faked tool prints: the first rule that matches a run answers it. */
struct xp_fake_rule {
	const char *prog; /* the program's base name; NULL: any */
	const char *args; /* its arguments after argv[0], joined by single spaces; NULL: any */
	const char *has;  /* one argument it must have among them; NULL: any */
	const char *out;  /* what it prints (copied at each run); NULL: it fails with xp_fake.fail */
};

/* Most arguments a run records; a run with more fails the test. */
#define XP_FAKE_MAX_ARGS 64
/* Most rules at once. */
#define XP_FAKE_MAX_RULES 8

/* The fake's settings and what it saw. Global because the host's run gets no context pointer. */
struct xp_fake {
	int calls;                              /* runs so far */
	int argc;                               /* arguments of the last run, argv[0] included */
	char argv[XP_FAKE_MAX_ARGS][1024];      /* the last run's arguments */
	const char *fail;                       /* error text of a failing run ("exit status 1") */
	double want_timeout_s;                  /* when > 0, every run must ask exactly this timeout */
	size_t want_max_out;                    /* when > 0, every run must ask exactly this limit */
	size_t n_rules;                         /* rules in use */
	struct xp_fake_rule rules[XP_FAKE_MAX_RULES]; /* in the order they are tried */
};

/* The one fake (reset it with xp_fake_reset at the start of each test that counts on it). */
extern struct xp_fake xp_fake;

/* Forgets every rule and run: no tool answers, runs fail with "exit status 1". */
void xp_fake_reset(void);
/* Adds rule r after the others, or replaces the rule with the same prog, args and has. */
void xp_fake_answer(struct xp_fake_rule r);
/* True when the last run had arg among its arguments (argv[0] excluded). */
bool xp_fake_saw(const char *arg);
/* A host whose run is the fake and whose replay reads replay_dir (NULL: live mode). */
struct xp_host xp_fake_host(const char *replay_dir);

/* A file's text, NUL-terminated (free it); len may be NULL. Fails the test when unreadable. */
char *xp_file_text(const char *path, size_t *len);
/* xp_file_text of fixture rel (see xp_fixture). */
char *xp_fixture_text(const char *rel, size_t *len);
/* A new empty raw node on the heap (it is large; free it). */
struct xp_raw_node *xp_fake_node(void);
/* True when one of n's warnings contains part. */
bool xp_fake_warned(const struct xp_raw_node *n, const char *part);

/* Checks device d of fixture what against "field=value" strings up to a NULL, one a field
 * of struct xp_raw_device by its name (index, bus_id, memory_total_mib, temperature_c, ...):
 * text and whole numbers exactly, fractions within 1e-9, "nan" as NaN. Fields not named are
 * not checked. */
void xp_fake_want(const struct xp_raw_device *d, const char *what, const char *const *want);

/* A recorded tool output and what the one device it describes must hold. */
struct xp_fake_expect {
	const char *file;                    /* the fixture (see xp_fixture) */
	const char *want[28];                /* "field=value" for xp_fake_want; the rest NULL */
	void (*more)(struct xp_raw_node *n); /* what only this file shows; NULL: nothing */
};
/* A vendor parser: text of len bytes into n; 0, or -1 with err set. */
typedef int xp_fake_parser(const char *text, size_t len, struct xp_raw_node *n, char *err, size_t errlen);
/* Parses e->file with parse into a new node, checks that it holds one device as e->want says,
 * runs e->more and returns the node (free it). */
struct xp_raw_node *xp_fake_expect_one(const struct xp_fake_expect *e, xp_fake_parser *parse);

/* Size of the oversized inputs (20 MiB): past every parser's limit on a tool's output. */
#define XP_FAKE_HUGE ((size_t)20 << 20)
/* A new buffer of XP_FAKE_HUGE bytes filled with copies of unit (ulen bytes), the last one cut
 * short; *whole (may be NULL) is the length the whole copies fill. Free it. */
char *xp_fake_huge(const char *unit, size_t ulen, size_t *whole);
/* Checks that parse refuses (-1) empty input, NULL, and each text up to a NULL, and leaves the
 * node it parsed into as it was: no device, its hostname untouched. */
void xp_fake_refuses(xp_fake_parser *parse, const char *const *texts);

/* Writes len bytes of text to dir/name with the given mode. */
void xp_fake_file(const char *dir, const char *name, const char *text, size_t len, unsigned mode);
/* Copies fixture rel to dir/name. */
void xp_fake_copy(const char *dir, const char *name, const char *rel);
/* Removes dir/name (when there). */
void xp_fake_unlink(const char *dir, const char *name);
/* Puts an executable stand-in named name in dir (the fake host answers for it) and returns its
 * path (static buffer). */
const char *xp_fake_tool(const char *dir, const char *name);
/* Removes dir and the files in it. */
void xp_fake_rmdir(const char *dir);
/* Sets PATH to path; returns the old value to give back to xp_fake_path_restore. */
char *xp_fake_path_set(const char *path);
/* Sets PATH back to old (unsets it when old is NULL) and frees old. */
void xp_fake_path_restore(char *old);

/* One adapter under test through the fake host: what every replay and live test sets up and
 * tears down alike (scratch directory, host, probe state, node). */
struct xp_fake_session {
	const struct xp_adapter *a; /* the adapter under test */
	char dir[64];               /* the scratch directory, /tmp/xp_<adapter>_XXXXXX */
	struct xp_host h;           /* replays from dir, or runs live (the fake answers its runs) */
	void *st;                   /* the last probe's state (closed by the next probe and the end) */
	char why[256];              /* the last probe's reason */
	struct xp_raw_node *n;      /* an empty node to enumerate into */
	char *old_path;             /* PATH before a live session pointed it at dir */
};
/* Starts s for adapter a: the fake reset, a new scratch directory, and a host that replays from
 * it (replay) or runs live with PATH set to the directory. */
void xp_fake_open(struct xp_fake_session *s, const struct xp_adapter *a, bool replay);
/* Closes the last probe's state, probes again and returns what the probe says. */
int xp_fake_probe(struct xp_fake_session *s);
/* Ends s: its state closed, PATH restored, node freed, scratch directory removed. */
void xp_fake_close(struct xp_fake_session *s);

#endif
