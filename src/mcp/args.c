// SPDX-License-Identifier: MIT
/*
 * The tools' arguments (mcp.h): a tool's table of them makes both its JSON
 * Schema and the checks of a call's arguments, so the two cannot disagree.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ift-render.h"
#include "mcp.h"

static int arg_index(const struct args *a, const char *name)
{
	for (int i = 0; i < MAX_ARGS && a->spec[i].name; i++)
		if (!strcmp(a->spec[i].name, name))
			return i;
	return -1;
}

bool ift_mcp_has(const struct args *a, const char *name)
{
	int i = arg_index(a, name);

	return i >= 0 && a->has[i];
}

int64_t ift_mcp_arg_int(const struct args *a, const char *name)
{
	int i = arg_index(a, name);

	return i < 0 ? 0 : a->has[i] ? a->i[i] : a->spec[i].def;
}

const char *ift_mcp_arg_str(const struct args *a, const char *name)
{
	int i = arg_index(a, name);

	return i >= 0 && a->has[i] ? a->s[i] : NULL;
}

bool ift_mcp_arg_bool(const struct args *a, const char *name)
{
	int i = arg_index(a, name);

	return i >= 0 && a->has[i] && a->b[i];
}

int ift_mcp_args_parse(const struct arg_spec *spec, json_object *args, struct args *a,
		       char *err, size_t errlen)
{
	struct json_object_iterator it, end;

	memset(a, 0, sizeof(*a));
	a->spec = spec;
	/* an iterator, not the foreach macro: ARGS may be NULL */
	if (args) {
		it = json_object_iter_begin(args);
		end = json_object_iter_end(args);
	}
	for (; args && !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
		const char *key = json_object_iter_peek_name(&it);
		json_object *val = json_object_iter_peek_value(&it);
		int i = arg_index(a, key);
		const struct arg_spec *s;

		if (i < 0) {
			snprintf(err, errlen, "unknown argument '%.64s' (see the tool's inputSchema)",
				 key);
			return -1;
		}
		s = &spec[i];
		switch (s->type) {
		case A_INT:
			if (!json_object_is_type(val, json_type_int)) {
				snprintf(err, errlen, "%s must be an integer", s->name);
				return -1;
			}
			/* beyond int64 it reads INT64_MAX, past every max */
			a->i[i] = json_object_get_int64(val);
			if (a->i[i] < s->min || a->i[i] > s->max) {
				snprintf(err, errlen, "%s must be from %" PRId64 " to %" PRId64,
					 s->name, s->min, s->max);
				return -1;
			}
			break;
		case A_STR:
			if (!json_object_is_type(val, json_type_string)) {
				snprintf(err, errlen, "%s must be a string", s->name);
				return -1;
			}
			a->s[i] = json_object_get_string(val);
			if ((int64_t)json_object_get_string_len(val) > s->max ||
			    (int64_t)strlen(a->s[i]) != json_object_get_string_len(val)) {
				snprintf(err, errlen, "%s must be at most %" PRId64
					 " bytes, without NUL", s->name, s->max);
				return -1;
			}
			break;
		case A_BOOL:
			if (!json_object_is_type(val, json_type_boolean)) {
				snprintf(err, errlen, "%s must be true or false", s->name);
				return -1;
			}
			a->b[i] = json_object_get_boolean(val);
			break;
		}
		a->has[i] = true;
	}
	for (int i = 0; i < MAX_ARGS && spec[i].name; i++) {
		if (spec[i].required && !a->has[i]) {
			snprintf(err, errlen, "missing argument %s", spec[i].name);
			return -1;
		}
	}
	return 0;
}

json_object *ift_mcp_input_schema(const struct arg_spec *spec)
{
	json_object *o = json_object_new_object(), *props = json_object_new_object();
	json_object *req = json_object_new_array();

	json_object_object_add(o, "type", json_object_new_string("object"));
	for (int i = 0; i < MAX_ARGS && spec[i].name; i++) {
		const struct arg_spec *s = &spec[i];
		json_object *p = json_object_new_object();

		json_object_object_add(p, "type", json_object_new_string(
			s->type == A_INT ? "integer" : s->type == A_STR ? "string" : "boolean"));
		if (s->type == A_INT) {
			ift_json_add_i64(p, "minimum", s->min);
			ift_json_add_i64(p, "maximum", s->max);
			if (!s->required && s->def)
				ift_json_add_i64(p, "default", s->def);
		} else if (s->type == A_STR) {
			json_object_object_add(p, "maxLength", json_object_new_int64(s->max));
		}
		json_object_object_add(p, "description", json_object_new_string(s->desc));
		json_object_object_add(props, s->name, p);
		if (s->required)
			json_object_array_add(req, json_object_new_string(s->name));
	}
	json_object_object_add(o, "properties", props);
	if (json_object_array_length(req))
		json_object_object_add(o, "required", req);
	else
		json_object_put(req);
	json_object_object_add(o, "additionalProperties", json_object_new_boolean(0));
	return o;
}
