/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Strings quoted for the text formats the writers produce. */
#ifndef PYEBPF_WRITE_ESCAPE_H
#define PYEBPF_WRITE_ESCAPE_H

#include <stdio.h>

/* A JSON string literal, quotes included; UTF-8 passes through, a byte
 * that is not well-formed UTF-8 becomes U+FFFD. */
void json_str(FILE *out, const char *s);
/* XML character data or attribute value, without quotes; a byte that is
 * not well-formed UTF-8 becomes U+FFFD. */
void xml_text(FILE *out, const char *s);
/*
 * A name from a profiled process made safe for a terminal or a line of
 * text: control characters (C0, DEL, C1 as UTF-8) and bytes that are not
 * well-formed UTF-8 become "\xNN" (C1: "\u00NN"); everything else, UTF-8
 * included, is kept. Writes at most size bytes including the NUL (cut at a
 * character boundary, never inside an escape); returns out.
 */
char *text_escape(const char *in, char *out, size_t size);

#endif
