/* safe_out.h: a stdio stream that passes text on with terminal controls shown, not obeyed. */
#ifndef XP_SAFE_OUT_H
#define XP_SAFE_OUT_H

#include <stdio.h>

/* A new write-only stream over under: what is written to it reaches under with each unsafe
 * sequence (xp_unsafe_len: C0 controls but newline and tab, DEL, C1 controls, bytes that are
 * not UTF-8, bidirectional controls) replaced by one '?', as xp_mask_controls does, and under
 * flushed after each write. buffering is setvbuf's mode (_IONBF for stderr, _IOLBF for a
 * terminal, _IOFBF otherwise). Closing it flushes it and leaves under open. NULL when stdio
 * cannot make one. */
FILE *xp_safe_stream(FILE *under, int buffering);

#endif
