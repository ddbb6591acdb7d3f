/* format.h: small formatters shared by text output (sizes, unknown values, control bytes). */
#ifndef XP_FORMAT_H
#define XP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Formats MiB as "512 MiB" or "63.9 GiB" (from 10 GiB up); "-" when negative (unknown). */
const char *xp_fmt_mib(char *buf, size_t len, int64_t mib);
/* Formats an integer, or "-" when negative (unknown). */
const char *xp_fmt_int(char *buf, size_t len, long long v);
/* Replaces each C0 control byte and DEL of s with '?', in place, so that quoted text from
 * users, files or the network cannot steer a terminal or forge log lines; returns s. */
char *xp_mask_controls(char *s);

#endif
