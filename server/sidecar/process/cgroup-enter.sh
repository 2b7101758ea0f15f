#!/bin/sh
# The fixed launcher of a capped CLI child (session-cgroup.ts). Usage:
#
#   /bin/sh cgroup-enter.sh <cgroup.procs file>... -- <program> <arg>...
#
# Writes this process's pid into each cgroup.procs file (one per cgroup v1 controller, or the one
# of cgroup v2), then replaces itself with the program: the CLI starts inside its cgroups, before
# it can fork anything. Nothing here evaluates its arguments: the program and its arguments are
# handed to exec as they are ("$@"), the files only to a redirection.
while [ "$#" -gt 0 ]; do
  if [ "$1" = "--" ]; then
    shift
    [ "$#" -gt 0 ] || { echo "conduit cgroup-enter: no program after --" >&2; exit 127; }
    exec "$@"
  fi
  printf '%s\n' "$$" >"$1" || { echo "conduit cgroup-enter: could not enter the cgroup $1" >&2; exit 126; }
  shift
done
echo "conduit cgroup-enter: no -- before the program" >&2
exit 127
