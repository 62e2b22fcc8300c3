#!/bin/sh
# Starts a descendant that leaves the process group (setsid), waits until it has
# appended its pid to the file named by $AIRLOCK_TEST_PIDS, and dies: the descendant is
# orphaned.
setsid sh -c 'echo $$ >> "$AIRLOCK_TEST_PIDS"; exec sleep 1000' </dev/null >/dev/null 2>&1 &
escaped=$!
until grep -qx "$escaped" "$AIRLOCK_TEST_PIDS" 2>/dev/null; do sleep 0.01; done
exit 3
