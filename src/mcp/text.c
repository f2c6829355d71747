// SPDX-License-Identifier: MIT
/*
 * A tool's result as text a model reads cheaply: the same values as the
 * structured result, without repeating every key on every row.
 *
 *   key: value                  a scalar
 *   key: a, b, c                an array of scalars
 *   key (3):                    an array of objects with the same keys
 *     col1<TAB>col2<TAB>...     and short values: a header, then one line
 *     v1<TAB>v2<TAB>...         per object; a nested value as compact JSON
 *   key (3):                    an array of arrays (SQL rows):
 *     v1<TAB>v2<TAB>...         one line each
 *   key (3):                    other arrays of objects: one line each,
 *     - k=v k=v ...             "k=v" pairs when the object is flat, else
 *     -                         its keys below, indented; long strings
 *       key: value              and scalars are "- value" lines
 *   key:                        an object: its keys, indented
 *
 * Strings are data from the traced program: a control byte, a backslash and
 * a tab are escaped (\n, \t, \\, \xNN), so a name can neither add a line nor
 * a column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "util/buf.h"

#define SMALL_CELL 160	/* bytes of nested JSON a table cell may take */

static void put(struct buf *b, const char *s)
{
	ift_buf_put(b, s, strlen(s));
}

static void put_str(struct buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];

		if (c == '\n')
			put(b, "\\n");
		else if (c == '\t')
			put(b, "\\t");
		else if (c == '\\')
			put(b, "\\\\");
		else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			put(b, esc);
		} else {
			ift_buf_put(b, s, 1);
		}
	}
}

static bool scalar(json_object *v)
{
	return !v || (!json_object_is_type(v, json_type_object) &&
		      !json_object_is_type(v, json_type_array));
}

static void put_value(struct buf *b, json_object *v)
{
	if (!v)
		put(b, "null");
	else if (json_object_is_type(v, json_type_string))
		put_str(b, json_object_get_string(v));
	else if (scalar(v))
		put(b, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	else	/* compact JSON, its strings escaped by json-c */
		put_str(b, json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void indent(struct buf *b, int n)
{
	for (int i = 0; i < n; i++)
		put(b, " ");
}

static bool flat(json_object *o)
{
	json_object_object_foreach(o, k, v) {
		(void)k;
		if (!scalar(v))
			return false;
	}
	return true;
}

/* True when every element is an object with the keys of the first, in order. */
static bool same_keys(json_object *arr)
{
	size_t n = json_object_array_length(arr);
	json_object *first = json_object_array_get_idx(arr, 0);

	if (!first || !json_object_is_type(first, json_type_object))
		return false;
	for (size_t i = 1; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		struct json_object_iterator a, ae, x, xe;

		if (!e || !json_object_is_type(e, json_type_object) ||
		    json_object_object_length(e) != json_object_object_length(first))
			return false;
		a = json_object_iter_begin(first);
		ae = json_object_iter_end(first);
		x = json_object_iter_begin(e);
		xe = json_object_iter_end(e);
		for (; !json_object_iter_equal(&a, &ae) && !json_object_iter_equal(&x, &xe);
		     json_object_iter_next(&a), json_object_iter_next(&x))
			if (strcmp(json_object_iter_peek_name(&a), json_object_iter_peek_name(&x)))
				return false;
	}
	return true;
}

/* True when every element is an array (SQL rows): one line each. */
static bool rows(json_object *arr)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (!e || !json_object_is_type(e, json_type_array))
			return false;
	}
	return true;
}

/* True when no element has a nested value longer than a short cell. */
static bool small_cells(json_object *arr)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object_object_foreach(json_object_array_get_idx(arr, i), k, v) {
			(void)k;
			if (!scalar(v) && strlen(json_object_to_json_string_ext(
					v, JSON_C_TO_STRING_PLAIN)) > SMALL_CELL)
				return false;
		}
	}
	return true;
}

/* True when every element is a short scalar: one comma-separated line. */
static bool short_scalars(json_object *arr)
{
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		if (!scalar(e) || (e && json_object_is_type(e, json_type_string) &&
				   (json_object_get_string_len(e) > SMALL_CELL / 4 ||
				    strchr(json_object_get_string(e), ','))))
			return false;
	}
	return true;
}

static void put_object(struct buf *b, json_object *o, int ind);

static void put_array(struct buf *b, const char *key, json_object *arr, int ind)
{
	size_t n = json_object_array_length(arr);
	bool scalars = short_scalars(arr);
	char head[64];

	indent(b, ind);
	put_str(b, key);
	if (scalars) {
		put(b, ":");
		for (size_t i = 0; i < n; i++) {
			put(b, i ? ", " : " ");
			put_value(b, json_object_array_get_idx(arr, i));
		}
		put(b, n ? "\n" : " (none)\n");
		return;
	}
	snprintf(head, sizeof(head), " (%zu):\n", n);
	put(b, head);
	if (rows(arr)) {
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(arr, i);

			indent(b, ind + 2);
			for (size_t k = 0; k < json_object_array_length(e); k++) {
				put(b, k ? "\t" : "");
				put_value(b, json_object_array_get_idx(e, k));
			}
			put(b, "\n");
		}
		return;
	}
	if (same_keys(arr) && small_cells(arr)) {
		json_object *first = json_object_array_get_idx(arr, 0);
		bool tab = false;

		indent(b, ind + 2);
		json_object_object_foreach(first, k, v0) {
			(void)v0;
			put(b, tab ? "\t" : "");
			put_str(b, k);
			tab = true;
		}
		put(b, "\n");
		for (size_t i = 0; i < n; i++) {
			json_object *e = json_object_array_get_idx(arr, i);

			indent(b, ind + 2);
			tab = false;
			json_object_object_foreach(e, k2, v) {
				(void)k2;
				put(b, tab ? "\t" : "");
				put_value(b, v);
				tab = true;
			}
			put(b, "\n");
		}
		return;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(arr, i);

		indent(b, ind + 2);
		put(b, "-");
		if (e && json_object_is_type(e, json_type_object) && flat(e)) {
			json_object_object_foreach(e, k, v) {
				put(b, " ");
				put_str(b, k);
				put(b, "=");
				put_value(b, v);
			}
			put(b, "\n");
		} else if (e && json_object_is_type(e, json_type_object)) {
			put(b, "\n");
			put_object(b, e, ind + 4);
		} else {
			put(b, " ");
			put_value(b, e);
			put(b, "\n");
		}
	}
}

static void put_object(struct buf *b, json_object *o, int ind)
{
	json_object_object_foreach(o, k, v) {
		if (v && json_object_is_type(v, json_type_array)) {
			put_array(b, k, v, ind);
		} else if (v && json_object_is_type(v, json_type_object)) {
			indent(b, ind);
			put_str(b, k);
			put(b, ":\n");
			put_object(b, v, ind + 2);
		} else {
			indent(b, ind);
			put_str(b, k);
			put(b, ": ");
			put_value(b, v);
			put(b, "\n");
		}
	}
}

char *ift_mcp_text(json_object *o)
{
	struct buf b;

	ift_buf_init(&b);
	put_object(&b, o, 0);
	ift_buf_u8(&b, 0);
	if (b.oom) {
		ift_buf_release(&b);
		return NULL;
	}
	return (char *)b.data;
}
