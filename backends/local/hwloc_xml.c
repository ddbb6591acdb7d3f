/* hwloc_xml.c: hwloc XML from other sites is checked before libhwloc reads it.
 *
 * Why a check and not an isolated import (a forked child): the import builds the topology
 * in this process's memory, which a child could only hand back as XML again, re-read by the
 * same importer. libhwloc 2.9's v2 importer requires, without checking, that an object with
 * a cpuset also has a complete_cpuset, and one with a nodeset a complete_nodeset (hwloc's
 * later fix 837a039 "reject imported object missing complete_cpuset/nodeset"): without them
 * it dereferences NULL while connecting the tree; a root object other than a Machine empties
 * the topology and crashes it too. The check reads the document with libxml2 (well-formed, no
 * DTD, no network, no entity declarations) and refuses what the importer would crash on,
 * naming the object and its line.
 *
 * A check is only worth what the importer reads being what it checked: hwloc's own reader
 * takes name="value" alone and stops at anything else (name = "value", 'value', &#x30;,
 * x:name) without a word, losing the rest of the element. So hwloc is given the document as
 * libxml2 read it, written back by libxml2, never the file, and the check refuses what that
 * reader cannot read even then (names outside [a-z_], namespaces, references beyond U+00FF).
 *
 * libhwloc itself is kept off libxml2 (xp_hwloc_no_libxml): its xml_libxml plugin, loaded by
 * Debian's build through dlopen, calls xmlSetGenericErrorFunc with a function of the plugin
 * and is dlclose'd when the last topology is destroyed, leaving libxml2's handler pointing
 * at unmapped code: a later libxml2 error without a parser context (xpool's nvidia-smi XML
 * reader) jumped there. hwloc's own XML reader is used instead, on documents libxml2 has
 * written.
 *
 * hwloc reports what it finds wrong with a topology on stderr, quoting the file (host and
 * process names in its out-of-order box): xp_hwloc_capture_begin/end take that text for the
 * node's warnings instead. */
#include "local/hwloc_xml.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <hwloc.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "format.h"
#include "model.h"
#include "sha256.h"
#include "xp_adapter.h"

/* Largest os_index of a NUMA node or PU accepted (hwloc makes a bitmap that wide). */
#define XP_HWLOC_MAX_OS_INDEX 1048575
#define XP_STR_(x) #x
#define XP_STR(x) XP_STR_(x)

static bool is_elem(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && n->name && strcmp((const char *)n->name, name) == 0;
}

/* Whether UTF-8 text holds only characters ISO-8859-1 has (U+0000..U+00FF): read as
 * ISO-8859-1, any other one came from a character reference, which the serializer writes
 * back as "&#N;" and hwloc's reader cannot read. */
static bool latin1(const xmlChar *s)
{
	for (; s && *s; s++)
		if (*s >= 0xc4) /* a lead byte of U+0100 and above */
			return false;
	return true;
}

/* Why hwloc's reader would not read the attribute a as libxml2 did, or NULL. That reader
 * takes name="value" with a name of [a-z_] and seven escapes (&lt; &gt; &amp; &quot; &#10;
 * &#13; &#9;, all libxml2 writes in a value), and stops reading an element's
 * attributes at the first other one without a word: the rest of the element, a
 * complete_cpuset say, is silently lost. */
static const char *unreadable_attr(const xmlAttr *a)
{
	const char *name = (const char *)a->name;
	if (a->ns)
		return "has a namespace";
	if (!*name || name[strspn(name, "abcdefghijklmnopqrstuvwxyz_")])
		return "has a name hwloc's reader cannot read";
	for (const xmlNode *t = a->children; t; t = t->next)
		if (!latin1(t->content))
			return "has a character reference beyond U+00FF";
	return NULL;
}

/* Most 32-bit words in a bitmap: XP_HWLOC_MAX_OS_INDEX's bit, as os_index is bounded. */
#define XP_HWLOC_MAX_WORDS ((XP_HWLOC_MAX_OS_INDEX + 1) / 32)

/* Whether an attribute holds a bitmap hwloc reads with hwloc_bitmap_sscanf: every object's
 * cpuset and nodeset kinds (complete_, allowed_, online_), a cpukind's and an initiator's. */
static bool bitmap_attr(const char *name)
{
	size_t l = strlen(name);
	return (l >= 6 && !strcmp(name + l - 6, "cpuset")) || (l >= 7 && !strcmp(name + l - 7, "nodeset"));
}

/* Whether s is a bitmap hwloc can read as it writes them: "0xf...f" (all set), or an optional
 * "0xf...f," then comma-separated 32-bit words, high first, each "0x" and up to 8 hex digits
 * (hwloc 0.9 wrote them without "0x"), a zero word possibly empty ("0x00000001,,,0x0",
 * "0xf...f,,0x0"). The word that begins the string may not be empty: libhwloc 2.9's reader
 * counts the words from the string's second byte, so a leading comma leaves it one short and
 * fails its assertion. Signs, spaces and wider words, which its strtoul would take, are
 * refused too: no hwloc writes them. */
static bool hwloc_bitmap_text(const char *s)
{
	bool infinite = !strncmp(s, "0xf...f", 7);
	if (infinite) {
		if (!s[7])
			return true;
		if (s[7] != ',')
			return false;
		s += 8;
	}
	if (!infinite && (!*s || *s == ','))
		return false;
	for (size_t words = 1;; words++) {
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
			s += 2;
			if (!strchr("0123456789abcdefABCDEF", *s) || !*s)
				return false; /* "0x" alone */
		}
		size_t hex = strspn(s, "0123456789abcdefABCDEF");
		if (hex > 8 || words > XP_HWLOC_MAX_WORDS)
			return false;
		s += hex;
		if (!*s)
			return true;
		if (*s++ != ',')
			return false;
	}
}

/* The first element below n (n included, document order) that hwloc's reader would read
 * otherwise than libxml2, or that its importer would crash on (an <object> with one set of
 * a pair and not the other); why says what, with the line. */
static const xmlNode *bad_node(const xmlNode *n, char *why, size_t len)
{
	static const char *const pairs[][2] = {{"cpuset", "complete_cpuset"}, {"nodeset", "complete_nodeset"}};
	for (; n; n = n->next) {
		if (n->type == XML_CDATA_SECTION_NODE) {
			snprintf(why, len, "line %ld: a CDATA section (hwloc's reader cannot read it)", xmlGetLineNo(n));
			return n;
		}
		/* hwloc's reader reads text only as the whole content of the elements that hold
		 * data (<userdata>, a distance matrix's <indexes> and <u64values>); text anywhere
		 * else, as between an object's children, leaks the object libhwloc 2.9 was reading
		 * (tests/fuzz/regress/hwloc_xml). */
		if (n->type == XML_TEXT_NODE && !xmlIsBlankNode(n) && n->parent && !is_elem(n->parent, "userdata") &&
		    !is_elem(n->parent, "indexes") && !is_elem(n->parent, "u64values")) {
			snprintf(why, len, "line %ld: text inside <%.40s> (hwloc's reader cannot read it)", xmlGetLineNo(n),
				 n->parent->name ? (const char *)n->parent->name : "?");
			return n;
		}
		if (n->type != XML_ELEMENT_NODE)
			continue;
		/* An object holds only what hwloc's DTDs allow in it (page_type, info, userdata,
		 * objects, and v1's distances): libhwloc 2.9 refuses any other child, leaking the
		 * object it was reading (tests/fuzz/regress/hwloc_xml). */
		if (n->parent && is_elem(n->parent, "object") && !is_elem(n, "object") && !is_elem(n, "page_type") &&
		    !is_elem(n, "info") && !is_elem(n, "userdata") && !is_elem(n, "distances")) {
			snprintf(why, len, "line %ld: <%.40s> inside an object (hwloc cannot import it)", xmlGetLineNo(n),
				 n->name ? (const char *)n->name : "?");
			return n;
		}
		/* hwloc's importer reads an object's type first: another attribute before it, or a
		 * type it does not know (its names, and the old ones it maps: Cache, Tile, Module,
		 * MemCache, System at the root), and it gives up leaking the object
		 * (tests/fuzz/regress/hwloc_xml/object-without-type-leaks.xml). */
		if (is_elem(n, "object")) {
			const xmlAttr *first = n->properties;
			xmlChar *type = first && !strcmp((const char *)first->name, "type") ? xmlGetNoNsProp(n, BAD_CAST "type") : NULL;
			hwloc_obj_type_t t;
			const char *v = (const char *)type;
			bool root = !n->parent || !is_elem(n->parent, "object");
			bool known = v && (hwloc_type_sscanf(v, &t, NULL, 0) == 0 || !strcasecmp(v, "Cache") ||
					   !strcasecmp(v, "Tile") || !strcasecmp(v, "Module") || !strcasecmp(v, "MemCache") ||
					   (root && !strcasecmp(v, "System")));
			if (!known)
				snprintf(why, len, "line %ld: object %s%.20s%s (hwloc cannot import it)", xmlGetLineNo(n),
					 v ? "of type " : "without its type as the first attribute", v ? v : "",
					 v ? " hwloc does not know" : "");
			xmlFree(type);
			if (!known)
				return n;
		}
		/* A NUMA node or PU's os_index is a bit of a set hwloc allocates: one absent (hwloc
		 * takes 2^32-1) or huge costs it 512 MiB and seconds for a few hundred bytes of file
		 * (tests/fuzz/regress/hwloc_xml). Real machines number them well below the cap. */
		if (is_elem(n, "object")) {
			xmlChar *type = xmlGetNoNsProp(n, BAD_CAST "type");
			bool indexed = type && (!strcasecmp((const char *)type, "NUMANode") || !strcasecmp((const char *)type, "PU"));
			xmlChar *os = indexed ? xmlGetNoNsProp(n, BAD_CAST "os_index") : NULL;
			char *end = NULL;
			unsigned long v = os ? strtoul((const char *)os, &end, 10) : 0;
			bool bad = indexed && (!os || end == (char *)os || *end || v > XP_HWLOC_MAX_OS_INDEX);
			if (bad)
				snprintf(why, len, "line %ld: object %s %s%.20s%s (hwloc cannot import it)", xmlGetLineNo(n),
					 (const char *)type, os ? "os_index " : "without an os_index", os ? (const char *)os : "",
					 os ? " is not a number up to " XP_STR(XP_HWLOC_MAX_OS_INDEX) : "");
			xmlFree(type);
			xmlFree(os);
			if (bad)
				return n;
		}
		/* An info without its name or value: libhwloc refuses it the same leaking way. */
		if (is_elem(n, "info") && (!xmlHasNsProp(n, BAD_CAST "name", NULL) || !xmlHasNsProp(n, BAD_CAST "value", NULL))) {
			snprintf(why, len, "line %ld: <info> without a name or a value (hwloc cannot import it)",
				 xmlGetLineNo(n));
			return n;
		}
		/* Nor a page_type without its size or count. */
		if (is_elem(n, "page_type") &&
		    (!xmlHasNsProp(n, BAD_CAST "size", NULL) || !xmlHasNsProp(n, BAD_CAST "count", NULL))) {
			snprintf(why, len, "line %ld: <page_type> without a size or a count (hwloc cannot import it)",
				 xmlGetLineNo(n));
			return n;
		}
		if (n->nsDef) {
			snprintf(why, len, "line %ld: <%.40s> declares a namespace (hwloc's reader cannot read it)",
				 xmlGetLineNo(n), (const char *)n->name);
			return n;
		}
		for (const xmlAttr *a = n->properties; a; a = a->next) {
			const char *w = unreadable_attr(a);
			if (w) {
				snprintf(why, len, "line %ld: attribute %.40s of <%.40s> %s", xmlGetLineNo(n),
					 (const char *)a->name, (const char *)n->name, w);
				return n;
			}
			if (bitmap_attr((const char *)a->name)) {
				xmlChar *v = xmlGetNoNsProp(n, a->name);
				bool ok = v && hwloc_bitmap_text((const char *)v);
				xmlFree(v);
				if (!ok) {
					snprintf(why, len,
						 "line %ld: attribute %.20s of <%.20s> is not a bitmap as hwloc writes one "
						 "(hwloc cannot import it)",
						 xmlGetLineNo(n), (const char *)a->name, (const char *)n->name);
					return n;
				}
			}
		}
		if (is_elem(n, "object"))
			for (size_t i = 0; i < 2; i++)
				for (size_t k = 0; k < 2; k++)
					if (xmlHasNsProp(n, BAD_CAST pairs[i][k], NULL) &&
					    !xmlHasNsProp(n, BAD_CAST pairs[i][!k], NULL)) {
						xmlChar *type = xmlGetNoNsProp(n, BAD_CAST "type");
						xmlChar *os = xmlGetNoNsProp(n, BAD_CAST "os_index");
						snprintf(why, len, "line %ld: object %.40s%s%.20s has a %s but no %s (hwloc cannot import it)",
							 xmlGetLineNo(n), type ? (const char *)type : "?", os ? " P#" : "",
							 os ? (const char *)os : "", pairs[i][k], pairs[i][!k]);
						xmlFree(type);
						xmlFree(os);
						return n;
					}
		const xmlNode *b = bad_node(n->children, why, len);
		if (b)
			return b;
	}
	return NULL;
}

/* Whether the root object (the first element in <topology>) is one libhwloc 2.9 can import:
 * any other type ends in "Topology became empty, aborting!" and a crash. Its v1 import
 * (a <topology> without a version, or <root> of 0.9) also takes an obsolete "System" at the
 * root, and a NUMANode there, above which it puts a Machine back itself. */
static bool bad_root(const xmlNode *top, char *why, size_t len)
{
	const xmlNode *o = top->children;
	while (o && o->type != XML_ELEMENT_NODE)
		o = o->next;
	if (!o || !is_elem(o, "object"))
		return false; /* hwloc refuses the file by itself */
	xmlChar *v = xmlGetNoNsProp(top, BAD_CAST "version");
	bool v1 = !v || strtoul((const char *)v, NULL, 10) < 2;
	xmlFree(v);
	xmlChar *t = xmlGetNoNsProp(o, BAD_CAST "type");
	const char *type = t ? (const char *)t : "";
	bool ok = strcasecmp(type, "Machine") == 0 ||
		  (v1 && (strcasecmp(type, "System") == 0 || strcasecmp(type, "NUMANode") == 0));
	if (!ok)
		snprintf(why, len, "line %ld: the root object is %s%.40s, not a Machine (hwloc cannot import it)",
			 xmlGetLineNo(o), t ? "of type " : "without a type", type);
	xmlFree(t);
	return !ok;
}

/* Removes comments and processing instructions below n (its siblings too): they say nothing
 * to hwloc, whose reader takes "<!--" and "<?" for tags and gives up on the file. */
static void strip_remarks(xmlNode *n)
{
	while (n) {
		xmlNode *next = n->next;
		if (n->type == XML_COMMENT_NODE || n->type == XML_PI_NODE) {
			xmlUnlinkNode(n);
			xmlFreeNode(n);
		} else if (n->type == XML_ELEMENT_NODE) {
			strip_remarks(n->children);
		}
		n = next;
	}
}

int xp_hwloc_xml_check(const char *what, const char *text, size_t len, char **out, size_t *out_len,
		       struct xp_err *err)
{
	*out = NULL;
	*out_len = 0;
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
	const xmlNode *root = xmlDocGetRootElement(doc);
	if (root && (bad_node(root, why, sizeof why) || bad_root(root, why, sizeof why))) {
		xmlFreeDoc(doc);
		return xp_errf(err, "%s: %s", what, why);
	}
	/* hwloc reads the document as libxml2 writes it back, never the file: '"' quotes, one
	 * space between attributes, references resolved and the escapes written as &lt; &gt;
	 * &amp; &quot; &#10; &#13; &#9;, which its reader knows, the other bytes as they were
	 * (ISO-8859-1 again). What the check approved is what hwloc imports. */
	strip_remarks(doc->children);
	*out = xp_xml_dump(doc, "ISO-8859-1", out_len);
	xmlFreeDoc(doc);
	if (!*out)
		return xp_errf(err, "%s: cannot write the checked hwloc XML topology back", what);
	return 0;
}

void xp_hwloc_no_libxml(void)
{
	/* Set once, before any thread reads the environment in earnest: libhwloc reads it at
	 * its first XML import or export and keeps the answer. */
	const char *v = getenv("HWLOC_LIBXML");
	if (!v || strcmp(v, "0") != 0)
		setenv("HWLOC_LIBXML", "0", 1);
}

/* One capture at a time: fd 2 is the process's, and two loads in two threads would otherwise
 * restore each other's. */
static pthread_mutex_t capture_lock = PTHREAD_MUTEX_INITIALIZER;

int xp_hwloc_capture_begin(struct xp_hwloc_capture *c, struct xp_err *err)
{
	pthread_mutex_lock(&capture_lock);
	fflush(stderr);
	/* fd 2 may be closed (xpool 2>&-): it is closed again afterwards. */
	bool open2 = fcntl(2, F_GETFD) >= 0;
	c->saved = open2 ? fcntl(2, F_DUPFD_CLOEXEC, 3) : -1;
	/* An unlinked file, not a pipe: hwloc writes while the load runs in this thread, and a
	 * pipe nobody reads would fill and block it. When no file can be made, hwloc's words are
	 * lost rather than let through. */
	c->file = NULL;
	int fd = -1;
	if (!open2 || c->saved >= 0) {
		c->file = tmpfile();
		fd = c->file ? fileno(c->file) : open("/dev/null", O_WRONLY | O_CLOEXEC);
	}
	if (fd < 0 || (fd != 2 && dup2(fd, 2) < 0)) {
		int e = errno;
		if (c->saved >= 0)
			close(c->saved);
		if (c->file)
			fclose(c->file);
		else if (fd >= 0)
			close(fd);
		pthread_mutex_unlock(&capture_lock);
		return xp_errf(err, "hwloc: cannot capture its messages: %s", strerror(e));
	}
	if (!c->file && fd != 2)
		close(fd);
	return 0;
}

/* Adds one message (s, n bytes) to v, cut, prefixed with "hwloc: " when hwloc did not say
 * so itself, its control and bidi characters masked. */
static void add_msg(char ***v, size_t *nv, const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (!n)
		return;
	if (*nv == XP_HWLOC_MAX_MSGS) {
		free((*v)[*nv - 1]);
		(*v)[*nv - 1] = xp_strdup("hwloc: more messages not shown");
		return;
	}
	char *m = xp_asprintf("%s%.*s", strncmp(s, "hwloc", 5) == 0 ? "" : "hwloc: ", (int)n, s);
	/* A box's lines are padded: one space between words. */
	char *w = m;
	for (const char *p = m; *p; p++)
		if (!(*p == ' ' && w > m && w[-1] == ' '))
			*w++ = *p;
	*w = '\0';
	size_t l = (size_t)(w - m);
	if (l > XP_HWLOC_MAX_MSG) { /* cut before a UTF-8 continuation byte, not in a character */
		for (l = XP_HWLOC_MAX_MSG; l && ((unsigned char)m[l] & 0xc0) == 0x80; l--)
			;
		m[l] = '\0';
	}
	xp_mask_controls(m);
	xp_strv_add(v, nv, m);
	free(m);
}

void xp_hwloc_capture_end(struct xp_hwloc_capture *c, char ***v, size_t *nv)
{
	fflush(stderr);
	if (c->saved >= 0) {
		dup2(c->saved, 2);
		close(c->saved);
	} else if (!c->file || fileno(c->file) != 2) {
		close(2); /* closed before; a file on fd 2 itself is closed with it below */
	}
	*v = NULL;
	*nv = 0;
	size_t len = 0;
	char *buf = xp_malloc(XP_HWLOC_MAX_CAPTURE + 1);
	if (c->file) {
		rewind(c->file);
		len = fread(buf, 1, XP_HWLOC_MAX_CAPTURE, c->file);
		fclose(c->file);
	}
	pthread_mutex_unlock(&capture_lock);
	buf[len] = '\0';
	/* hwloc reports a line at a time ("hwloc: Topology became empty, aborting!") or in a
	 * box of '*' lines, each line of it starting with "* ": a box is one message. */
	size_t cur_len = 0;
	bool in_box = false;
	char *joined = xp_malloc(len + 2);
	for (size_t pos = 0; pos < len;) {
		const char *l = buf + pos;
		size_t n = strcspn(l, "\n");
		pos += n + (pos + n < len);
		bool border = n >= 3 && strspn(l, "*") >= n;
		if (border || !in_box || n == 0) {
			add_msg(v, nv, joined, cur_len);
			cur_len = 0;
		}
		if (border) {
			in_box = !in_box;
			continue;
		}
		if (in_box && n && l[0] == '*')
			l++, n--;
		if (cur_len)
			joined[cur_len++] = ' ';
		memcpy(joined + cur_len, l, n);
		cur_len += n;
		if (!in_box) {
			add_msg(v, nv, joined, cur_len);
			cur_len = 0;
		}
	}
	add_msg(v, nv, joined, cur_len);
	free(joined);
	free(buf);
}

/* What hwloc said about a document, by the SHA-256 of the document (of nothing for this
 * machine): hwloc reports some problems once per process (its out-of-order box and its OS
 * error report keep a static flag), and the console and the agent load the same file at every
 * refresh. Kept for the process's life, a few documents at a time. */
#define SAID_DOCS 16
static struct said {
	unsigned char key[32];
	char **v;
	size_t n;
} said[SAID_DOCS];
static size_t said_next;

void xp_hwloc_said_again(const char *doc, size_t len, char ***v, size_t *nv)
{
	unsigned char key[32];
	struct xp_sha256 h;
	xp_sha256_init(&h);
	xp_sha256_update(&h, doc ? doc : "", doc ? len : 0);
	xp_sha256_final(&h, key);
	pthread_mutex_lock(&capture_lock);
	struct said *s = NULL;
	for (size_t i = 0; i < SAID_DOCS && !s; i++)
		if (said[i].n && memcmp(said[i].key, key, sizeof key) == 0)
			s = &said[i];
	if (*nv) {
		/* hwloc spoke: what it said now replaces what it said before. */
		if (!s) {
			s = &said[said_next];
			said_next = (said_next + 1) % SAID_DOCS;
		}
		xp_strv_free(s->v, s->n);
		s->v = NULL;
		s->n = 0;
		memcpy(s->key, key, sizeof key);
		for (size_t i = 0; i < *nv; i++)
			xp_strv_add(&s->v, &s->n, (*v)[i]);
	} else if (s) {
		for (size_t i = 0; i < s->n; i++)
			xp_strv_add(v, nv, s->v[i]);
	}
	pthread_mutex_unlock(&capture_lock);
}
