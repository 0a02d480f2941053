// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "read/pprof_cost.h"

#include <stdbool.h>
#include <string.h>

/*
 * The model follows protobuf-c 1.4's protobuf_c_message_unpack(): one
 * allocation of sizeof_message per message; one 32-byte ScannedMember per
 * field occurrence, in slabs that double past the first 16 (on the C stack)
 * and are freed when the message is done; one array per repeated field;
 * one ProtobufCMessageUnknownField per unknown field plus a copy of its
 * bytes; a copy of every string (NUL added) and bytes value. Every count is
 * rounded up (heap chunks, whole slabs) so the result is an upper bound.
 */
#define SCANNED_MEMBER 32
#define FIRST_SLAB 16
#define MAX_FIELDS 64 /* pprof's messages have at most 17 */
#define MAX_NESTING 16

/* A heap chunk of glibc's malloc for `size` bytes. */
static uint64_t chunk(uint64_t size)
{
	size = (size + 8 + 15) & ~(uint64_t)15;
	return size < 32 ? 32 : size;
}

/* Bytes of one element of a repeated field (protobuf-c: sizeof_elt_in_repeated_array). */
static uint64_t element_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return 8;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_MESSAGE:
		return sizeof(void *);
	case PROTOBUF_C_TYPE_BYTES:
		return sizeof(ProtobufCBinaryData);
	default: /* 32-bit numbers, enums, protobuf_c_boolean */
		return 4;
	}
}

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Elements of a packed repeated field of `len` bytes. */
static uint64_t packed_count(ProtobufCType t, const uint8_t *p, uint64_t len)
{
	uint64_t n = 0;

	switch (t) {
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_FLOAT:
		return len / 4;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE:
		return len / 8;
	default: /* varints: one ends at each byte below 0x80 */
		for (uint64_t i = 0; i < len; i++)
			n += p[i] < 0x80;
		return n;
	}
}

struct walk {
	uint64_t perm; /* kept until the whole profile is freed */
	uint64_t temp; /* at most held at once while unpacking, freed after */
};

static int scan(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len, int nesting, struct walk *w,
		struct pprof_cost *top)
{
	const uint8_t *end = p + len;
	uint64_t counts[MAX_FIELDS] = { 0 }, occurrences = 0, unknown = 0, child_temp = 0;

	if (nesting > MAX_NESTING || d->n_fields > MAX_FIELDS)
		return -1;
	w->perm = chunk(d->sizeof_message);
	while (p < end) {
		uint64_t key, value_len = 0;
		const uint8_t *value;

		if (!varint(&p, end, &key) || !(key >> 3) || key >> 3 > UINT32_MAX)
			return -1;
		value = p;
		switch (key & 7) {
		case PROTOBUF_C_WIRE_TYPE_VARINT:
			if (!varint(&p, end, &value_len))
				return -1;
			value_len = (uint64_t)(p - value);
			break;
		case PROTOBUF_C_WIRE_TYPE_64BIT:
			value_len = 8;
			break;
		case PROTOBUF_C_WIRE_TYPE_32BIT:
			value_len = 4;
			break;
		case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED:
			if (!varint(&p, end, &value_len))
				return -1;
			value = p;
			break;
		default: /* groups: protobuf-c refuses them */
			return -1;
		}
		if (value_len > (uint64_t)(end - value))
			return -1;
		p = value + value_len;
		occurrences++;

		const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3));
		if (!f) {
			unknown++;
			w->perm += chunk(value_len);
			continue;
		}
		bool packed = (key & 7) == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED && f->type != PROTOBUF_C_TYPE_STRING &&
			      f->type != PROTOBUF_C_TYPE_BYTES && f->type != PROTOBUF_C_TYPE_MESSAGE;

		if (f->label == PROTOBUF_C_LABEL_REPEATED)
			counts[f - d->fields] += packed ? packed_count(f->type, value, value_len) : 1;
		if (packed)
			continue;
		if (f->type == PROTOBUF_C_TYPE_MESSAGE && (key & 7) == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) {
			struct walk sub;

			if (scan(f->descriptor, value, value_len, nesting + 1, &sub, top))
				return -1;
			w->perm += sub.perm;
			if (sub.temp > child_temp)
				child_temp = sub.temp;
		} else if (f->type == PROTOBUF_C_TYPE_STRING) {
			w->perm += chunk(value_len + 1);
		} else if (f->type == PROTOBUF_C_TYPE_BYTES && value_len) {
			w->perm += chunk(value_len);
		}
	}
	for (unsigned i = 0; i < d->n_fields; i++)
		if (counts[i]) {
			w->perm += chunk(counts[i] * element_size(d->fields[i].type));
			if (!nesting && counts[i] > top->top_count) {
				top->top_count = counts[i];
				top->top_field = d->fields[i].name;
			}
		}
	if (unknown)
		w->perm += chunk(unknown * sizeof(ProtobufCMessageUnknownField));
	/* Slabs double: the ones past the first hold at most twice the occurrences. */
	w->temp = (occurrences > FIRST_SLAB ? 2 * occurrences * SCANNED_MEMBER : 0) + child_temp;
	return 0;
}

int pprof_cost__scan(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len, struct pprof_cost *c)
{
	struct walk w;

	memset(c, 0, sizeof(*c));
	if (scan(d, data, len, 0, &w, c))
		return -1;
	c->bytes = w.perm + w.temp;
	return 0;
}
