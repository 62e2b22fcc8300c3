#!/bin/sh
# Starts a descendant that leaves the process group (setsid), appending its pid to the
# file named by $AIRLOCK_TEST_PIDS, and dies: the descendant is orphaned.
setsid sh -c 'echo $$ >> "$AIRLOCK_TEST_PIDS"; exec sleep 1000' </dev/null >/dev/null 2>&1 &
sleep 0.05
exit 3
