/* cambricon.h: internals of the Cambricon adapter: the parser of `cnmon info`, a pure function
 * over text so tests feed it recorded or constructed outputs.
 *
 * UNTESTED AGAINST A REAL CAPTURE: no public, attributable `cnmon info` output was available to
 * us. The parser follows the field names Cambricon's tool is documented and quoted with ("Card
 * N" blocks of "Key : value" lines, nested sections such as "Physical Memory Usage" with "Total"
 * and "Used"); see cnmon.c for what each name rests on. */
#ifndef XP_CAMBRICON_H
#define XP_CAMBRICON_H

#include <stddef.h>

#include "xp_adapter.h"

/* Largest output read or parsed: `cnmon info` prints a few KiB per card, processes included. */
#define XP_CNMON_MAX_TEXT ((size_t)8 << 20)

/* Replay file name (the layout `xpool record` writes and --replay reads). */
#define XP_CNMON_INFO_FILE "cnmon-info.txt"

/* Parses `cnmon info`: node is emptied (its hostname kept), then gets one device per "Card N"
 * block in order. 0, or -1 with err (empty output, no card block). */
int xp_cnmon_parse_info(const char *text, size_t len, struct xp_raw_node *node, char *err, size_t errlen);

#endif
