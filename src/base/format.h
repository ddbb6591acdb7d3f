/* format.h: small formatters shared by text output (sizes, unknown values, control bytes). */
#ifndef XP_FORMAT_H
#define XP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Formats MiB as "512 MiB" or "63.9 GiB" (from 10 GiB up); "-" when negative (unknown). */
const char *xp_fmt_mib(char *buf, size_t len, int64_t mib);
/* Formats MiB in the short form of tables: "512M", "64G", "79.6G", "1.5T" (binary units, one
 * decimal below 100 unless whole); "-" when negative (unknown). */
const char *xp_fmt_mib_short(char *buf, size_t len, int64_t mib);
/* Formats a link speed given in Mb/s as operators read it: "400 Gb/s", "2.5 Gb/s", "100 Mb/s";
 * "-" when not positive (unknown). */
const char *xp_fmt_link(char *buf, size_t len, int64_t mbps);
/* Formats a span of seconds as operators read waits: "45s", "12m", "3h05m", "2d4h"; "-" when
 * negative (unknown). */
const char *xp_fmt_span(char *buf, size_t len, int64_t s);
/* Formats an integer, or "-" when negative (unknown). */
const char *xp_fmt_int(char *buf, size_t len, long long v);
/* Replaces each unsafe sequence of s (xp_unsafe_len) with one '?', in place, so that quoted
 * text from users, files or the network cannot steer a terminal, forge log lines or reorder
 * what is shown; returns s. */
char *xp_mask_controls(char *s);
/* Byte length of an unsafe sequence at s, 0 when s starts a safe character: a C0 control or
 * DEL (1), a byte that starts no well-formed UTF-8 character (1: a raw 8-bit CSI 0x9b, a stray
 * continuation, an overlong form), a C1 control U+0080-U+009F (2), a bidirectional control
 * (xp_bidi_len). */
size_t xp_unsafe_len(const char *s);
/* Byte length of the Unicode bidirectional control at s (U+061C, U+200E, U+200F,
 * U+202A-U+202E, U+2066-U+2069, which reorder the text shown around them), 0 if none. */
size_t xp_bidi_len(const char *s);

#endif
