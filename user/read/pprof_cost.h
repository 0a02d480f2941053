/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What unpacking a protobuf message would cost, read from its wire format
 * before protobuf-c allocates anything. protobuf-c's unpack allocates per
 * message and per field: two bytes of input (an empty pprof Sample) become
 * a hundred-odd bytes of memory, so 60 MB of inflated input can take
 * gigabytes. The reader refuses a recording whose cost is beyond its budget
 * instead of finding out by running out of memory.
 */
#ifndef PYEBPF_READ_PPROF_COST_H
#define PYEBPF_READ_PPROF_COST_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

struct pprof_cost {
	uint64_t bytes;        /* protobuf-c's peak memory, heap overhead included (an upper bound) */
	uint64_t top_count;    /* the most frequent field of the outer message */
	const char *top_field; /* its name ("sample"), or NULL when the message is empty */
};

/*
 * The cost of unpacking `len` bytes as message `d`. 0, or -1 when the bytes
 * are not protobuf wire format (protobuf-c would refuse them too).
 */
int pprof_cost__scan(const ProtobufCMessageDescriptor *d, const uint8_t *data, size_t len, struct pprof_cost *c);

#endif
