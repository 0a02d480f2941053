/* Struct member offsets and sizes from a binary's DWARF (libdw), for checking the built-in tables. */
#ifndef PYEBPF_TEST_DWARF_H
#define PYEBPF_TEST_DWARF_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The complete struct (or union) a type DIE names, through typedefs and qualifiers. */
static inline bool dw_strip(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(die);

		if ((tag == DW_TAG_structure_type || tag == DW_TAG_union_type) &&
		    !dwarf_hasattr(die, DW_AT_declaration))
			return true;
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_structure_type)
			return false;
		if (!dwarf_attr(die, DW_AT_type, &a) || !dwarf_formref_die(&a, die))
			return false;
	}
	return false;
}

/* Find a type by name (a typedef name, or a struct tag) with a full definition. */
static inline bool dw_find_type(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, child;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &child) == 0) {
			do {
				int tag = dwarf_tag(&child);
				const char *n = dwarf_diename(&child);

				if (!n || strcmp(n, name) || (tag != DW_TAG_typedef && tag != DW_TAG_structure_type))
					continue;
				*out = child;
				if (dw_strip(out))
					return true;
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	return false;
}

/* Offset of "a.b.c" inside type `type`; -1 if there is no such member. */
static inline long dw_offset(Dwarf *dw, const char *type, const char *path)
{
	Dwarf_Die t, m;
	char buf[256], *save = NULL;
	long total = 0;

	if (!dw_find_type(dw, type, &t))
		return -1;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *part = strtok_r(buf, ".", &save); part; part = strtok_r(NULL, ".", &save)) {
		bool found = false;
		Dwarf_Attribute a;
		Dwarf_Word loc;

		if (dwarf_child(&t, &m) != 0)
			return -1;
		do {
			const char *n = dwarf_diename(&m);

			if (dwarf_tag(&m) == DW_TAG_member && n && !strcmp(n, part)) {
				found = true;
				break;
			}
		} while (dwarf_siblingof(&m, &m) == 0);
		if (!found)
			return -1;
		if (dwarf_attr(&m, DW_AT_data_member_location, &a) && dwarf_formudata(&a, &loc) == 0)
			total += (long)loc;
		if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
			return -1;
		dw_strip(&t);
	}
	return total;
}

static inline long dw_sizeof(Dwarf *dw, const char *type)
{
	Dwarf_Die t;

	return dw_find_type(dw, type, &t) ? dwarf_bytesize(&t) : -1;
}

#endif
