/* hwloc_xml.h: what xpool does before and around libhwloc reading a topology (hwloc_xml.c). */
#ifndef XP_HWLOC_XML_H
#define XP_HWLOC_XML_H

#include <stddef.h>
#include <stdio.h>

#include "xp.h"

/* Checks an hwloc XML document (len bytes) for what libhwloc 2.x's importer assumes and does
 * not check (an object with a cpuset and no complete_cpuset, a root that is not a Machine
 * crash it) and for what hwloc's reader would read otherwise than libxml2; 0 with the document
 * as libxml2 read it, written back, in *out (*out_len bytes and a NUL; the caller frees it):
 * what libhwloc must be given instead of the file. -1 with err naming the line, prefixed by
 * what ("FILE: "). */
int xp_hwloc_xml_check(const char *what, const char *text, size_t len, char **out, size_t *out_len,
		       struct xp_err *err);

/* Keeps libhwloc off libxml2 (HWLOC_LIBXML=0) before a topology is made: its libxml plugin
 * sets libxml2's thread-wide error handler and may be unloaded, leaving it dangling. */
void xp_hwloc_no_libxml(void);

/* At most this many messages of hwloc's are kept from one load, */
#define XP_HWLOC_MAX_MSGS 8
/* each cut to this many bytes (its out-of-order box holds about 450). */
#define XP_HWLOC_MAX_MSG 600
/* At most this many bytes of what hwloc printed in one load are read back. */
#define XP_HWLOC_MAX_CAPTURE (64u << 10)

/* What hwloc prints to stderr during a load, captured (xp_hwloc_capture_begin/end). */
struct xp_hwloc_capture {
	FILE *file; /* the unlinked file fd 2 points at, or NULL (then /dev/null) */
	int saved;  /* fd 2 as it was, or -1 when it was closed */
};

/* Points fd 2 at an unlinked temporary file until xp_hwloc_capture_end (one capture at a time
 * in the process: a second waits); -1 with err when it cannot. */
int xp_hwloc_capture_begin(struct xp_hwloc_capture *c, struct xp_err *err);
/* Puts fd 2 back and returns what hwloc printed meanwhile as one-line messages ("hwloc: ...",
 * a box of '*' lines as one), cut and masked, in *v (*nv, the caller frees them). */
void xp_hwloc_capture_end(struct xp_hwloc_capture *c, char ***v, size_t *nv);
/* hwloc says some things once per process: when a load of doc (len bytes; NULL for this
 * machine) said nothing (*nv 0), fills *v with what an earlier load of the same document said;
 * when it said something, remembers it. */
void xp_hwloc_said_again(const char *doc, size_t len, char ***v, size_t *nv);

#endif
