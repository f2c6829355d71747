// SPDX-License-Identifier: MIT
/*
 * Unit tests for src/trace/untrusted.c: the one rule for strings from the
 * traced program.  A program may name itself "\e]0;pwn\a" or hand us bytes
 * that are no UTF-8; a terminal must not act on them, and JSON, Parquet and
 * SQLite must get valid UTF-8.  Every case here is a sequence the review of
 * issue 36 fed through the outputs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ift-words.h"

static void expect(const char *in, enum ift_text_rule rule, const char *want)
{
	char buf[IFT_TEXT_MAX * 4 + 64];
	char *dup = ift_text_dup(in, rule);

	assert_string_equal(ift_text(buf, sizeof(buf), in, rule), want);
	assert_non_null(dup);
	assert_string_equal(dup, want);
	free(dup);
}

static void test_term_controls(void **state)
{
	(void)state;
	expect("\x1b]0;pwn\a\x1b[2J", IFT_TEXT_TERM, "\\x1b]0;pwn\\x07\\x1b[2J");
	expect("tab\there\nnl\x7f", IFT_TEXT_TERM, "tab\\x09here\\x0anl\\x7f");
	/* C1: CSI as a raw byte (no UTF-8) and as U+009B */
	expect("a\x9b" "1m", IFT_TEXT_TERM, "a\\x9b1m");
	expect("a\xc2\x9b" "1m", IFT_TEXT_TERM, "a\\xc2\\x9b1m");
	/* the last character before C1, and the first after */
	expect("\xc2\x9f\xc2\xa0", IFT_TEXT_TERM, "\\xc2\\x9f\xc2\xa0");
	/* right-to-left override and isolate; the marks beside them stay */
	expect("x\xe2\x80\xaey\xe2\x81\xa6z\xe2\x80\xa9", IFT_TEXT_TERM,
	       "x\\xe2\\x80\\xaey\\xe2\\x81\\xa6z\xe2\x80\xa9");
	/* text is text: accents, CJK, an emoji, a backslash */
	expect("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\xa5 a\\b", IFT_TEXT_TERM,
	       "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\xa5 a\\b");
}

static void test_term_invalid(void **state)
{
	(void)state;
	expect("a\xff" "b", IFT_TEXT_TERM, "a\\xffb");
	/* overlong '/', a surrogate, above U+10FFFF, a sequence cut short */
	expect("\xc0\xaf", IFT_TEXT_TERM, "\\xc0\\xaf");
	expect("\xed\xa0\x80", IFT_TEXT_TERM, "\\xed\\xa0\\x80");
	expect("\xf4\x90\x80\x80", IFT_TEXT_TERM, "\\xf4\\x90\\x80\\x80");
	expect("\xe6\x97", IFT_TEXT_TERM, "\\xe6\\x97");
}

static void test_field(void **state)
{
	(void)state;
	expect("pt worker\x01", IFT_TEXT_FIELD, "pt\\x20worker\\x01");
	expect("pt worker", IFT_TEXT_TERM, "pt worker");
}

static void test_utf8(void **state)
{
	(void)state;
	expect("a\xff" "b", IFT_TEXT_UTF8, "a\xef\xbf\xbd" "b");
	expect("\xc0\xaf", IFT_TEXT_UTF8, "\xef\xbf\xbd\xef\xbf\xbd");
	expect("\xed\xa0\x80", IFT_TEXT_UTF8, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	/* valid text and control bytes are the format's to escape */
	expect("caf\xc3\xa9\x1b[0m", IFT_TEXT_UTF8, "caf\xc3\xa9\x1b[0m");
	assert_true(ift_text_is_utf8("caf\xc3\xa9", 5));
	assert_false(ift_text_is_utf8("a\xff", 2));
	assert_false(ift_text_is_utf8("\xc3", 1));		/* cut by LEN */
	assert_false(ift_text_is_utf8("a\0b", 3));
	assert_false(ift_text_is_utf8("\xf0\x82\x82\xac", 4));	/* overlong */
}

static void test_utf8_as_is(void **state)
{
	const char *ok = "caf\xc3\xa9", *bad = "a\xff" "b\0c";
	char *copy;

	(void)state;
	/* unchanged: S itself, no copy */
	assert_ptr_equal(ift_text_utf8(ok, 5, IFT_TEXT_UTF8, &copy), ok);
	assert_null(copy);
	/* changed: the copy, returned; a NUL inside LEN ends it */
	assert_string_equal(ift_text_utf8(bad, 5, IFT_TEXT_UTF8_ALL, &copy), "a\xef\xbf\xbd" "b");
	assert_non_null(copy);
	free(copy);
}

static void test_bound(void **state)
{
	char *in = malloc(IFT_TEXT_MAX + 1001), *want = malloc(IFT_TEXT_MAX + 64);

	(void)state;
	assert_non_null(in);
	assert_non_null(want);
	memset(in, 'a', IFT_TEXT_MAX + 1000);
	in[IFT_TEXT_MAX + 1000] = 0;
	memset(want, 'a', IFT_TEXT_MAX);
	strcpy(want + IFT_TEXT_MAX, "...[+1000 bytes]");
	expect(in, IFT_TEXT_TERM, want);
	expect(in, IFT_TEXT_UTF8, want);
	expect(in, IFT_TEXT_UTF8_ALL, in);
	/* exactly the bound: whole */
	in[IFT_TEXT_MAX] = 0;
	want[IFT_TEXT_MAX] = 0;
	expect(in, IFT_TEXT_UTF8, want);
	/* a character across the bound is left out whole */
	memcpy(in + IFT_TEXT_MAX - 1, "\xc3\xa9", 3);
	strcpy(want + IFT_TEXT_MAX - 1, "...[+2 bytes]");
	expect(in, IFT_TEXT_UTF8, want);
	free(in);
	free(want);
}

static void test_small_buffer(void **state)
{
	char buf[6];

	(void)state;
	/* an escape that does not fit is left out whole, not cut */
	assert_string_equal(ift_text(buf, sizeof(buf), "ab\x1b" "c", IFT_TEXT_TERM), "ab");
	assert_string_equal(ift_text(buf, sizeof(buf), "abcdefgh", IFT_TEXT_TERM), "abcde");
	assert_string_equal(ift_text(buf, 4, "a\xc3\xa9", IFT_TEXT_UTF8), "a\xc3\xa9");
	assert_string_equal(ift_text(buf, 3, "a\xc3\xa9", IFT_TEXT_UTF8), "a");
	assert_string_equal(ift_text(buf, sizeof(buf), NULL, IFT_TEXT_TERM), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_term_controls),
		cmocka_unit_test(test_term_invalid),
		cmocka_unit_test(test_field),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_utf8_as_is),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_small_buffer),
	};

	return cmocka_run_group_tests_name("words", tests, NULL, NULL);
}
