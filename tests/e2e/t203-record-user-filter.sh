# The user-space task filter (used where the kernel has no set_event_pid)
# gives the same tasks, names and per-thread switch counts as the kernel's.
RECORD_FLAGS=--user-filter
. "$(dirname "${BASH_SOURCE[0]}")/t201-record-tasks.sh"
