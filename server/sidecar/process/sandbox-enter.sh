#!/bin/sh
# The fixed launcher of a sandboxed CLI child (sandbox.ts). Usage:
#
#   /bin/sh sandbox-enter.sh <seccomp filter file> <bwrap> <arg>...
#
# Opens the compiled seccomp filter as file descriptor 9 (the argv says `--seccomp 9`; bwrap reads
# it, loads it and closes it before the CLI starts) and replaces itself with bwrap. Nothing here
# evaluates its arguments: the file only goes to a redirection, the rest to exec as it is ("$@").
[ "$#" -ge 2 ] || { echo "conduit sandbox-enter: usage: <seccomp filter> <bwrap> <arg>..." >&2; exit 127; }
filter="$1"
shift
[ -r "$filter" ] || { echo "conduit sandbox-enter: cannot read the seccomp filter $filter" >&2; exit 126; }
exec 9<"$filter"
exec "$@"
