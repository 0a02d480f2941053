/*
 * libFuzzer target for what BPF copies out of a profiled process for its
 * request labels (bpf/context.bpf.h): a context variable's value and a
 * span's name (python/value_label.h: str, int, bytes objects' first bytes,
 * in every built-in layout) and a span's ids (python/otel_ids.h: 30-bit
 * digits). The bytes are the target's: any of them may lie. The text
 * made must be printable ASCII (escaped) and terminated within its room.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pyebpf.h"
#include "python/offsets.h"
#include "python/otel_ids.h"
#include "python/value_label.h"

static void check_text(const char *out, size_t size)
{
	size_t n = strnlen(out, size);

	if (n == size)
		abort(); /* not terminated */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			abort(); /* a control character reached the label */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t nlayouts;
	const struct py_layout *layouts = py_layouts_builtin(&nlayouts);
	uint8_t raw[PYEBPF_CTX_LABEL_BYTES] = { 0 };
	uint32_t digits[PYEBPF_TRACE_DIGITS] = { 0 };
	char out[PYEBPF_CTX_LABEL_BYTES * 4 + 8], small[12], span[17];
	uint64_t hi, lo;

	if (size < 2)
		return 0;
	const struct py_layout *l = &layouts[data[0] % nlayouts];
	enum py_value_kind kind = (enum py_value_kind)(data[1] % 4);
	size_t len = size - 2 < sizeof(raw) ? size - 2 : sizeof(raw);

	memcpy(raw, data + 2, len);
	/* The whole copy, and shorter ones (a name's copy is shorter). */
	if (py_value_label(l, kind, raw, sizeof(raw), out, sizeof(out)))
		check_text(out, sizeof(out));
	if (py_value_label(l, kind, raw, len, out, sizeof(out)))
		check_text(out, sizeof(out));
	if (py_value_label(l, kind, raw, len, small, sizeof(small)))
		check_text(small, sizeof(small));
	memcpy(digits, raw, sizeof(digits));
	if (otel_ids_from_digits(digits, data[1] % 8, &hi, &lo)) {
		otel_trace_hex(hi, lo, out);
		otel_span_hex(lo, span);
		check_text(span, sizeof(span));
		check_text(out, 33);
	}
	return 0;
}
