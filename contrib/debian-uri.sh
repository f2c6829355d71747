#!/bin/sh
# debian-uri.sh: the Debian archive this machine's apt already uses (its
# first non-security URI, deb822 or one-line sources), else deb.debian.org.
# contrib/distros/root.sh makes its roots from it.
u=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
    awk '{print $2}' | grep -v security | head -1)
[ -n "$u" ] || u=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		   2>/dev/null | awk '{print $2}' | grep -v security | head -1)
echo "${u:-http://deb.debian.org/debian}"
