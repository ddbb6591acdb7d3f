/* xml.c: parsing an XML document with libxml2 quietly, and writing one back, for every xpool
 * use of libxml2 (the nvidia-smi report, the check of hwloc topologies before hwloc reads
 * them, the checked topology hwloc is given). */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlmemory.h>
#include <libxml/xmlerror.h>

#include "xp_adapter.h"

/* The first error libxml2 reported during a parse (its count, line and message). */
struct xml_errs {
	int n, line;
	char msg[160];
};

/* Keeps the first error (warnings are not kept), cut, its control bytes shown as '?': the
 * message quotes the document, and the document is not trusted. */
#if LIBXML_VERSION >= 21200
static void on_xml_error(void *data, const xmlError *e)
#else
static void on_xml_error(void *data, xmlErrorPtr e)
#endif
{
	struct xml_errs *x = data;
	if (!x || !e || e->level == XML_ERR_WARNING || x->n++)
		return;
	x->line = e->line;
	snprintf(x->msg, sizeof x->msg, "%s", e->message ? e->message : "error");
	size_t l = strlen(x->msg);
	while (l && (x->msg[l - 1] == '\n' || x->msg[l - 1] == ' '))
		x->msg[--l] = '\0';
	for (char *p = x->msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

/* What libxml2 writes without a parser context: counted, never printed. */
static void on_generic_error(void *data, const char *fmt, ...)
{
	struct xml_errs *x = data;
	(void)fmt;
	if (x && x->n++ == 0)
		snprintf(x->msg, sizeof x->msg, "libxml2 error");
}

struct _xmlDoc *xp_xml_read(const char *text, size_t len, const char *encoding, char *err, size_t errlen)
{
	if (len >= INT_MAX) {
		xp_text_err(err, errlen, "too large");
		return NULL;
	}
	/* libxml2 reports through handlers that are global to the thread: the default ones print
	 * the offending input line to stderr (terminal escapes included), and another library
	 * (hwloc's libxml plugin) may have left one pointing into code it has since unloaded.
	 * Ours are installed for this parse only and cleared after it, so that none points into
	 * an adapter once it is closed either; XML_PARSE_NOERROR/NOWARNING quiet the rest. */
	struct xml_errs xe = {0};
	xmlSetGenericErrorFunc(&xe, on_generic_error);
	xmlSetStructuredErrorFunc(&xe, on_xml_error);
	xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
	xmlDocPtr doc = NULL;
	if (ctxt) {
		ctxt->vctxt.error = NULL; /* "huge text node" goes there, not through NOERROR */
		ctxt->vctxt.warning = NULL;
		doc = xmlCtxtReadMemory(ctxt, text, (int)len, NULL, encoding,
					XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	}
	xmlSetStructuredErrorFunc(NULL, NULL);
	xmlSetGenericErrorFunc(NULL, NULL);
	if (!ctxt) {
		xp_text_err(err, errlen, "out of memory");
		return NULL;
	}
	/* libxml2 may keep a document after an error it stopped at (a huge text node): any
	 * error makes the document unusable. */
	if (!doc || xe.n || !ctxt->wellFormed) {
		if (!xe.n)
			snprintf(xe.msg, sizeof xe.msg, "not well-formed");
		if (xe.line > 0)
			xp_text_err(err, errlen, "line %d: %s", xe.line, xe.msg);
		else
			xp_text_err(err, errlen, "%s", xe.msg);
		xmlFreeDoc(doc);
		doc = NULL;
	}
	xmlFreeParserCtxt(ctxt);
	return doc;
}

char *xp_xml_dump(struct _xmlDoc *doc, const char *encoding, size_t *len)
{
	/* The serializer reports only through the generic handler (out of memory, an encoder
	 * failing): quiet too, for the same reasons as the parse. */
	struct xml_errs xe = {0};
	xmlSetGenericErrorFunc(&xe, on_generic_error);
	xmlSetStructuredErrorFunc(&xe, on_xml_error);
	xmlChar *buf = NULL;
	int n = 0;
	xmlDocDumpFormatMemoryEnc(doc, &buf, &n, encoding, 0);
	xmlSetStructuredErrorFunc(NULL, NULL);
	xmlSetGenericErrorFunc(NULL, NULL);
	char *out = NULL;
	if (buf && n > 0 && !xe.n) {
		out = malloc((size_t)n + 1);
		if (out) {
			memcpy(out, buf, (size_t)n);
			out[n] = '\0';
			*len = (size_t)n;
		}
	}
	xmlFree(buf);
	return out;
}
