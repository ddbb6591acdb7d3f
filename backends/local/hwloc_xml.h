/* hwloc_xml.h: what xpool does before libhwloc reads an XML topology (hwloc_xml.c). */
#ifndef XP_HWLOC_XML_H
#define XP_HWLOC_XML_H

#include <stddef.h>

#include "xp.h"

/* Checks an hwloc XML document (len bytes) for what libhwloc 2.x's importer assumes and does
 * not check (an object with a cpuset and no complete_cpuset crashes it); -1 with err naming
 * the object and its line, prefixed by what ("FILE: "). */
int xp_hwloc_xml_check(const char *what, const char *text, size_t len, struct xp_err *err);

/* Keeps libhwloc off libxml2 (HWLOC_LIBXML=0) before a topology is made: its libxml plugin
 * sets libxml2's thread-wide error handler and may be unloaded, leaving it dangling. */
void xp_hwloc_no_libxml(void);

#endif
