/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Strings quoted for the text formats the writers produce. */
#ifndef PYEBPF_WRITE_ESCAPE_H
#define PYEBPF_WRITE_ESCAPE_H

#include <stdio.h>

/* A JSON string literal, quotes included; UTF-8 passes through. */
void json_str(FILE *out, const char *s);
/* XML character data or attribute value, without quotes. */
void xml_text(FILE *out, const char *s);

#endif
