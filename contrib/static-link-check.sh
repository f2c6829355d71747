#!/bin/sh
# static-link-check.sh LOG: the linker's output for a static build (make
# STATIC=1), which traced (-y) dlopen and the functions that reach it.
# glibc warns for each call that needs its shared libraries at run time: the
# name service's (getpwnam, getgrouplist, ...) and dlopen.  None may remain
# but two dlopen() calls no path of ours reaches:
#  - libtraceevent's plugin loader (event-plugin.o), linked in with tep_free;
#    only tep_load_plugins() and tep_load_plugins_hook() call it;
#  - SQLite's extension loader (os_unix.o), reached only through
#    sqlite3_load_extension(): from SQL's load_extension() (func.o), which
#    is off unless sqlite3_enable_load_extension() turns it on, and which
#    query's authorizer denies anyway (src/export/query.c).
# Exits 1, naming what it found, otherwise 0.
set -eu
log=$1
bad=$(grep "in statically linked applications requires" "$log" |
	sed -n "s/.*Using '\([^']*\)'.*/\1/p" | grep -vx dlopen || true)
callers=$(grep ': reference to dlopen$' "$log" |
	grep -v -e '(event-plugin\.o): ' -e '(os_unix\.o): ' || true)
reach=$(grep -E ': reference to (tep_load_plugins|tep_load_plugins_hook|sqlite3_enable_load_extension|sqlite3_load_extension)$' "$log" |
	grep -v '(func\.o): reference to sqlite3_load_extension$' || true)
[ -z "$bad$callers$reach" ] && exit 0
[ -z "$bad" ] || echo "static link: calls that load the name service's modules: $(echo $bad)" >&2
[ -z "$callers" ] || echo "static link: dlopen() called from: $callers" >&2
[ -z "$reach" ] || echo "static link: a dlopen() made reachable: $reach" >&2
exit 1
