/* hwloc_xml.c: hwloc XML from other sites is checked before libhwloc reads it.
 *
 * Why a check and not an isolated import (a forked child): the import builds the topology
 * in this process's memory, which a child could only hand back as XML again, re-read by the
 * same importer. libhwloc 2.9's v2 importer requires, without checking, that an object with
 * a cpuset also has a complete_cpuset, and one with a nodeset a complete_nodeset (hwloc's
 * later fix 837a039 "reject imported object missing complete_cpuset/nodeset"): without them
 * it dereferences NULL while connecting the tree. The check reads the document with libxml2
 * (well-formed, no DTD, no network, no entity declarations) and refuses what the importer
 * would crash on, naming the object and its line.
 *
 * libhwloc itself is kept off libxml2 (xp_hwloc_no_libxml): its xml_libxml plugin, loaded by
 * Debian's build through dlopen, calls xmlSetGenericErrorFunc with a function of the plugin
 * and is dlclose'd when the last topology is destroyed, leaving libxml2's handler pointing
 * at unmapped code: a later libxml2 error without a parser context (xpool's nvidia-smi XML
 * reader) jumped there. hwloc's own XML reader is used instead, on documents libxml2 has
 * already found well-formed. */
#include "local/hwloc_xml.h"

#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "xp_adapter.h"

static bool is_elem(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && n->name && strcmp((const char *)n->name, name) == 0;
}

/* The first <object> below n (n included) with one set of a pair and not the other. */
static const xmlNode *bad_object(const xmlNode *n, const char **has, const char **lacks)
{
	static const char *const pairs[][2] = {{"cpuset", "complete_cpuset"}, {"nodeset", "complete_nodeset"}};
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (is_elem(n, "object"))
			for (size_t i = 0; i < 2; i++)
				for (size_t k = 0; k < 2; k++)
					if (xmlHasProp(n, BAD_CAST pairs[i][k]) && !xmlHasProp(n, BAD_CAST pairs[i][!k])) {
						*has = pairs[i][k];
						*lacks = pairs[i][!k];
						return n;
					}
		const xmlNode *b = bad_object(n->children, has, lacks);
		if (b)
			return b;
	}
	return NULL;
}

int xp_hwloc_xml_check(const char *what, const char *text, size_t len, struct xp_err *err)
{
	if (len >= INT_MAX)
		return xp_errf(err, "%s: too large for an hwloc XML topology", what);
	if (memmem(text, len, "<!ENTITY", 8))
		return xp_errf(err, "%s: entity declarations are not accepted in an hwloc XML topology", what);
	/* Read as ISO-8859-1, where every byte is a character: the check is about the
	 * document's structure, and hwloc's reader takes a host name that is not UTF-8
	 * (discovery then masks it), so libxml2 must not refuse the file for it. */
	char why[200];
	xmlDocPtr doc = xp_xml_read(text, len, "ISO-8859-1", why, sizeof why);
	if (!doc)
		return xp_errf(err, "%s: not an hwloc XML topology: %s", what, why);
	int rc = 0;
	const xmlNode *root = xmlDocGetRootElement(doc);
	const char *has = NULL, *lacks = NULL;
	const xmlNode *bad = root ? bad_object(root, &has, &lacks) : NULL;
	if (bad) {
		xmlChar *type = xmlGetProp(bad, BAD_CAST "type");
		xmlChar *os = xmlGetProp(bad, BAD_CAST "os_index");
		rc = xp_errf(err, "%s: line %ld: object %.40s%s%.20s has a %s but no %s (hwloc cannot import it)",
			     what, xmlGetLineNo(bad), type ? (const char *)type : "?", os ? " P#" : "",
			     os ? (const char *)os : "", has, lacks);
		xmlFree(type);
		xmlFree(os);
	}
	xmlFreeDoc(doc);
	return rc;
}

void xp_hwloc_no_libxml(void)
{
	/* Set once, before any thread reads the environment in earnest: libhwloc reads it at
	 * its first XML import or export and keeps the answer. */
	const char *v = getenv("HWLOC_LIBXML");
	if (!v || strcmp(v, "0") != 0)
		setenv("HWLOC_LIBXML", "0", 1);
}
