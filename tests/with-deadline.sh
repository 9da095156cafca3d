#!/bin/bash
# with-deadline.sh SECONDS CMD [ARGS...] - runs CMD; if it is still running
# after SECONDS, prints what every process below it is doing, then ends them
# and exits 124.
#
# Why: a test that hangs inside the Soft-RoCE VM or on CI is otherwise killed
# by an outer timeout that says only "timed out", and the next run may not
# hang again. Before anything is killed this prints, for each descendant: its
# command line and, per thread, the kernel's wait channel, current system
# call and (as root) kernel stack; with gdb installed, every thread's
# backtrace too. Pick SECONDS below
# the outer limits (meson's timeout, RXE_VM_TIMEOUT) so this one fires first.
# Exit status: CMD's, or 124 at the deadline.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS CMD [ARGS...]" >&2
  exit 2
fi
limit=$1
shift

"$@" &
child=$!

# Every process whose chain of parents reaches $1 (from /proc: ps may not
# be installed).
descendants() {
  awk -v root="$1" '
    FNR == 1 { pid = FILENAME; sub("^/proc/", "", pid); sub("/status$", "", pid) }
    $1 == "PPid:" { parent[pid] = $2 }
    END {
      want[root] = 1
      do {
        grew = 0
        for (p in parent)
          if (!(p in want) && (parent[p] in want)) { want[p] = 1; grew = 1 }
      } while (grew)
      for (p in want) if (p != root) print p
    }' /proc/[0-9]*/status 2>/dev/null
}

dump_one() {
  local pid=$1 t
  echo "--- pid $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)"
  for t in /proc/"$pid"/task/*; do
    [ -d "$t" ] || continue
    printf '  tid %s %-16s wchan=%s syscall=%s\n' "${t##*/}" \
      "$(cat "$t/comm" 2>/dev/null)" "$(cat "$t/wchan" 2>/dev/null)" \
      "$(cut -d' ' -f1 "$t/syscall" 2>/dev/null)"
    # The kernel side (root only): a thread stuck in a driver, such as
    # rxe's verbs, shows there and nowhere else.
    sed 's/^/      /' "$t/stack" 2>/dev/null
  done
  if command -v gdb >/dev/null; then
    timeout 60 gdb -p "$pid" -batch -nx -q -ex "set pagination off" \
      -ex "thread apply all bt" 2>&1 | grep -E '^(Thread|#)' || true
  fi
}

# wait -n returns when either job ends: CMD, or the timer.
( sleep "$limit" ) &
timer=$!
wait -n "$child" "$timer"
if kill -0 "$child" 2>/dev/null && ! kill -0 "$timer" 2>/dev/null; then
  echo "with-deadline: still running after $limit s: $*" >&2
  echo "with-deadline: what each process is doing:" >&2
  pids=$(descendants "$child")
  for p in $child $pids; do dump_one "$p"; done >&2
  # shellcheck disable=SC2086 # a list of pids
  kill -TERM $pids "$child" 2>/dev/null
  sleep 5
  # shellcheck disable=SC2086
  kill -KILL $pids "$child" 2>/dev/null
  wait "$child" 2>/dev/null
  exit 124
fi
kill "$timer" 2>/dev/null
wait "$timer" 2>/dev/null
wait "$child"
